// Delivers alerts to a real Alertmanager (Debian's prometheus-alertmanager)
// started on loopback for the test.
#include "server/alerts/alertmanager_notifier.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/alerts/http_client.h"
#include "tests/util/ports.h"
#include "tests/util/subprocess.h"

namespace tracehealth {
namespace {

using ::tracehealth::testing::NewTempDir;
using ::tracehealth::testing::PickFreePort;
using ::tracehealth::testing::Subprocess;
using ::tracehealth::testing::WriteFile;

constexpr char kAlertmanager[] = "/usr/bin/prometheus-alertmanager";

v1::Alert MakeAlert(const std::string& host, v1::AlertState state) {
  v1::Alert a;
  a.set_rule("TracehealthAttachStallRisk");
  a.set_host_id(host);
  a.set_state(state);
  a.set_severity("critical");
  (*a.mutable_labels())["alertname"] = a.rule();
  (*a.mutable_labels())["host"] = host;
  (*a.mutable_labels())["severity"] = "critical";
  (*a.mutable_annotations())["summary"] = host + ": stall";
  absl::Time t = absl::Now() - absl::Minutes(1);
  *a.mutable_active_since() =
      google::protobuf::util::TimeUtil::SecondsToTimestamp(
          absl::ToUnixSeconds(t));
  *a.mutable_fired_at() = a.active_since();
  if (state == v1::ALERT_STATE_RESOLVED) {
    *a.mutable_resolved_at() =
        google::protobuf::util::TimeUtil::SecondsToTimestamp(
            absl::ToUnixSeconds(absl::Now()));
  }
  return a;
}

// Hosts of the active alerts Alertmanager holds for our rule.
std::vector<std::string> ActiveHosts(const std::string& base) {
  absl::StatusOr<HttpResponse> r = HttpGet(
      base + "/api/v2/alerts?active=true&silenced=false&inhibited=false",
      absl::Seconds(5));
  std::vector<std::string> hosts;
  if (!r.ok() || r->status != 200) return hosts;
  google::protobuf::ListValue list;
  if (!google::protobuf::util::JsonStringToMessage(r->body, &list).ok())
    return hosts;
  for (const auto& v : list.values()) {
    const auto& f = v.struct_value().fields();
    const auto& labels = f.at("labels").struct_value().fields();
    const auto& status = f.at("status").struct_value().fields();
    if (labels.at("alertname").string_value() != "TracehealthAttachStallRisk")
      continue;
    if (status.at("state").string_value() != "active") continue;
    hosts.push_back(labels.at("host").string_value());
  }
  std::sort(hosts.begin(), hosts.end());
  return hosts;
}

bool WaitFor(const std::function<bool()>& cond, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return cond();
}

class AlertmanagerNotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = NewTempDir("am");
    ASSERT_TRUE(WriteFile(dir + "/am.yml",
                          "route:\n  receiver: default\n  group_wait: 1s\n"
                          "receivers:\n  - name: default\n")
                    .ok());
    int port = PickFreePort();
    ASSERT_GT(port, 0);
    base_ = absl::StrCat("http://127.0.0.1:", port);
    auto p = Subprocess::Start(
        {kAlertmanager, "--config.file=" + dir + "/am.yml",
         "--storage.path=" + dir,
         absl::StrCat("--web.listen-address=127.0.0.1:", port),
         "--cluster.listen-address="},
        dir + "/am.log");
    ASSERT_TRUE(p.ok()) << p.status();
    am_ = *std::move(p);
    ASSERT_TRUE(WaitFor(
        [&] {
          absl::StatusOr<HttpResponse> r =
              HttpGet(base_ + "/-/ready", absl::Seconds(1));
          return r.ok() && r->status == 200;
        },
        absl::Seconds(30)))
        << "alertmanager did not become ready";
  }

  std::string base_;
  std::unique_ptr<Subprocess> am_;
};

TEST_F(AlertmanagerNotifierTest, FiringThenResolvedReachAlertmanager) {
  AlertmanagerNotifier::Options opts;
  opts.url = base_;
  opts.poll = absl::Milliseconds(50);
  AlertmanagerNotifier notifier(opts);
  notifier.Update({MakeAlert("h1", v1::ALERT_STATE_FIRING),
                   MakeAlert("h2", v1::ALERT_STATE_FIRING),
                   MakeAlert("h3", v1::ALERT_STATE_PENDING)});
  EXPECT_TRUE(WaitFor(
      [&] {
        return ActiveHosts(base_) == std::vector<std::string>{"h1", "h2"};
      },
      absl::Seconds(20)))
      << "active: " << ActiveHosts(base_).size();
  notifier.Update({MakeAlert("h1", v1::ALERT_STATE_RESOLVED)});
  EXPECT_TRUE(WaitFor(
      [&] { return ActiveHosts(base_) == std::vector<std::string>{"h2"}; },
      absl::Seconds(20)));
  AlertmanagerNotifier::Stats s = notifier.stats();
  EXPECT_GE(s.posts_ok, 2u);
  EXPECT_EQ(s.posts_failed, 0u);
}

TEST(AlertmanagerNotifierDownTest, FailuresAreCountedAndNeverBlock) {
  AlertmanagerNotifier::Options opts;
  opts.url =
      absl::StrCat("http://127.0.0.1:", PickFreePort());  // nothing listens
  opts.poll = absl::Milliseconds(20);
  opts.timeout = absl::Milliseconds(500);
  AlertmanagerNotifier notifier(opts);
  absl::Time start = absl::Now();
  for (int i = 0; i < 1000; ++i) {
    notifier.Update({MakeAlert(absl::StrCat("h", i), v1::ALERT_STATE_FIRING)});
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_TRUE(WaitFor([&] { return notifier.stats().posts_failed >= 1; },
                      absl::Seconds(10)));
  EXPECT_EQ(notifier.stats().posts_ok, 0u);
  EXPECT_FALSE(notifier.stats().last_error.empty());
}

TEST(AlertmanagerJsonTest, FiringEndsInTheFutureResolvedAtResolution) {
  absl::Time now = absl::FromUnixSeconds(1800000000);
  std::string json =
      AlertmanagerNotifier::ToJson({MakeAlert("h1", v1::ALERT_STATE_FIRING)},
                                   now, absl::Minutes(1), "http://x/");
  google::protobuf::ListValue list;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &list).ok())
      << json;
  ASSERT_EQ(list.values_size(), 1);
  const auto& f = list.values(0).struct_value().fields();
  EXPECT_EQ(f.at("endsAt").string_value(), "2027-01-15T08:04:00+00:00");
  EXPECT_EQ(f.at("generatorURL").string_value(), "http://x/");
  EXPECT_EQ(f.at("labels").struct_value().fields().at("host").string_value(),
            "h1");
}

}  // namespace
}  // namespace tracehealth
