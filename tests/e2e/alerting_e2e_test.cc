// End to end: real Prometheus and Alertmanager (Debian's packages) on
// loopback, the real server and agent on a fixture host whose thread count
// the test changes. When the host crosses the attach-latency and stall
// thresholds, the server's own rules fire and reach Alertmanager's API (from
// the server's push), and Prometheus' rules fire on the scraped /metrics;
// when the host recovers, both resolve.
//
// The server's /metrics also passes `promtool check metrics`.
//
// The shipped rules are used with their `for:` durations set to 0s, so the
// test takes seconds, not the production five minutes.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "server/alerts/http_client.h"
#include "tests/agent/fixture_util.h"
#include "tests/server/server_process.h"
#include "tests/util/eventually.h"
#include "tests/util/ports.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr char kHost[] = "e2e-host";
const std::set<std::string> kCrossing = {"TracehealthAttachLatencyHigh",
                                         "TracehealthAttachStallRisk"};

std::string NoWait(const std::string& rules) {
  return absl::StrReplaceAll(rules,
                             {{"for: 5m", "for: 0s"}, {"for: 15m", "for: 0s"}});
}

void SetThreads(const std::string& root, int threads) {
  ASSERT_TRUE(WriteFile(root + "/proc/loadavg",
                        absl::StrCat("1.00 1.00 1.00 3/", threads, " 99999\n"))
                  .ok());
}

google::protobuf::Value ParseJson(const std::string& body) {
  google::protobuf::Value v;
  if (!google::protobuf::util::JsonStringToMessage(body, &v).ok()) return {};
  return v;
}

// v[key] of a JSON object, or an empty value (never aborts on odd JSON).
const google::protobuf::Value& Field(const google::protobuf::Value& v,
                                     const std::string& key) {
  static const google::protobuf::Value* const kEmpty =
      new google::protobuf::Value();
  const auto& fields = v.struct_value().fields();
  auto it = fields.find(key);
  return it == fields.end() ? *kEmpty : it->second;
}

// Alert names Alertmanager holds as active for kHost.
std::set<std::string> AlertmanagerActive(const std::string& base) {
  std::set<std::string> names;
  absl::StatusOr<HttpResponse> r = tracehealth::HttpGet(
      base + "/api/v2/alerts?active=true&silenced=false&inhibited=false",
      absl::Seconds(5));
  if (!r.ok() || r->status != 200) return names;
  const google::protobuf::Value alerts = ParseJson(r->body);
  for (const auto& a : alerts.list_value().values()) {
    const google::protobuf::Value& labels = Field(a, "labels");
    if (Field(Field(a, "status"), "state").string_value() != "active") continue;
    if (Field(labels, "host").string_value() != kHost) continue;
    names.insert(Field(labels, "alertname").string_value());
  }
  return names;
}

// Alert names Prometheus' own rules have firing for kHost.
std::set<std::string> PrometheusFiring(const std::string& base) {
  std::set<std::string> names;
  absl::StatusOr<HttpResponse> r =
      tracehealth::HttpGet(base + "/api/v1/alerts", absl::Seconds(5));
  if (!r.ok() || r->status != 200) return names;
  google::protobuf::Value v = ParseJson(r->body);
  for (const auto& a :
       Field(Field(v, "data"), "alerts").list_value().values()) {
    const google::protobuf::Value& labels = Field(a, "labels");
    if (Field(labels, "host").string_value() != kHost) continue;
    if (Field(a, "state").string_value() == "firing") {
      names.insert(Field(labels, "alertname").string_value());
    }
  }
  return names;
}

bool Contains(const std::set<std::string>& have,
              const std::set<std::string>& want) {
  for (const std::string& w : want) {
    if (have.count(w) == 0) return false;
  }
  return true;
}

bool Disjoint(const std::set<std::string>& have,
              const std::set<std::string>& want) {
  for (const std::string& w : want) {
    if (have.count(w) != 0) return false;
  }
  return true;
}

std::unique_ptr<Subprocess> StartReady(const std::vector<std::string>& argv,
                                       const std::string& log,
                                       const std::string& ready_url) {
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(argv, log);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  bool ready = Eventually(
      [&] {
        absl::StatusOr<HttpResponse> r =
            tracehealth::HttpGet(ready_url, absl::Seconds(1));
        return r.ok() && r->status == 200;
      },
      absl::Seconds(60));
  EXPECT_TRUE(ready) << argv[0]
                     << " not ready; log: " << ReadFile(log).value_or("");
  return *std::move(p);
}

TEST(AlertingEndToEndTest, ThresholdCrossingFiresInBothAndRecoveryResolves) {
  const std::string dir = NewTempDir("e2e");
  const std::string root = CopyFixture("preempt-none-6.16-240k");
  SetThreads(root, 2000);

  // Alertmanager.
  int am_port = PickFreePort();
  ASSERT_GT(am_port, 0);
  const std::string am = absl::StrCat("http://127.0.0.1:", am_port);
  ASSERT_TRUE(
      WriteFile(
          dir + "/am/am.yml",
          "route:\n  receiver: r\n  group_wait: 1s\nreceivers:\n  - name: r\n")
          .ok());
  std::unique_ptr<Subprocess> am_proc = StartReady(
      {"/usr/bin/prometheus-alertmanager",
       "--config.file=" + dir + "/am/am.yml", "--storage.path=" + dir + "/am",
       absl::StrCat("--web.listen-address=127.0.0.1:", am_port),
       "--cluster.listen-address="},
      dir + "/am.log", am + "/-/ready");
  ASSERT_NE(am_proc, nullptr);
  // A second, unclustered Alertmanager: the server posts to every URL it
  // is given, so both hold the alerts.
  int am2_port = PickFreePort();
  ASSERT_GT(am2_port, 0);
  const std::string am2 = absl::StrCat("http://127.0.0.1:", am2_port);
  std::filesystem::create_directories(dir + "/am2");
  std::unique_ptr<Subprocess> am2_proc = StartReady(
      {"/usr/bin/prometheus-alertmanager",
       "--config.file=" + dir + "/am/am.yml", "--storage.path=" + dir + "/am2",
       absl::StrCat("--web.listen-address=127.0.0.1:", am2_port),
       "--cluster.listen-address="},
      dir + "/am2.log", am2 + "/-/ready");
  ASSERT_NE(am2_proc, nullptr);

  // Server with the shipped rules, pushing to Alertmanager.
  absl::StatusOr<std::string> rules =
      ReadFile(Runfile("deploy/alerts/rules.yaml"));
  ASSERT_TRUE(rules.ok());
  ASSERT_TRUE(WriteFile(dir + "/server-rules.yaml", NoWait(*rules)).ok());
  std::filesystem::create_directories(dir + "/server");
  absl::StatusOr<ServerProcess> server =
      StartServer(dir + "/server",
                  {"--alert_rules=" + dir + "/server-rules.yaml",
                   "--alertmanager_url=" + am + "," + am2,
                   "--alert_eval_interval=1s", "--alert_resend_interval=2s"});
  ASSERT_TRUE(server.ok()) << server.status();

  // Prometheus scraping the server every second with the shipped rules.
  absl::StatusOr<std::string> prom_rules =
      ReadFile(Runfile("deploy/prometheus/tracehealth.rules.yml"));
  ASSERT_TRUE(prom_rules.ok());
  ASSERT_TRUE(WriteFile(dir + "/prom/rules.yml", NoWait(*prom_rules)).ok());
  ASSERT_TRUE(
      WriteFile(
          dir + "/prom/prometheus.yml",
          absl::StrCat("global:\n  scrape_interval: 1s\n"
                       "  evaluation_interval: 1s\n"
                       "rule_files: [rules.yml]\n"
                       "scrape_configs:\n  - job_name: tracehealth-server\n"
                       "    static_configs:\n      - targets: ['",
                       server->metrics_addr, "']\n"))
          .ok());
  int prom_port = PickFreePort();
  ASSERT_GT(prom_port, 0);
  const std::string prom = absl::StrCat("http://127.0.0.1:", prom_port);
  std::unique_ptr<Subprocess> prom_proc = StartReady(
      {"/usr/bin/prometheus", "--config.file=" + dir + "/prom/prometheus.yml",
       "--storage.tsdb.path=" + dir + "/prom/data",
       absl::StrCat("--web.listen-address=127.0.0.1:", prom_port)},
      dir + "/prometheus.log", prom + "/-/ready");
  ASSERT_NE(prom_proc, nullptr);

  // The agent on the fixture host, reporting every second.
  absl::StatusOr<std::unique_ptr<Subprocess>> agent = Subprocess::Start(
      {Runfile("agent/tracehealth-agent"), "--root=" + root,
       "--state_dir=" + dir + "/agent", "--server=" + server->grpc_addr,
       std::string("--host_id=") + kHost, "--interval=1s"},
      dir + "/agent.log");
  ASSERT_TRUE(agent.ok()) << agent.status();

  // Healthy: 2,000 threads. Prometheus sees the host in the fleet's
  // aggregates (it needs no series of its own), nothing fires.
  ASSERT_TRUE(Eventually(
      [&] {
        absl::StatusOr<HttpResponse> r = tracehealth::HttpGet(
            prom + "/api/v1/query?query=sum(tracehealth_fleet_hosts)",
            absl::Seconds(2));
        return r.ok() && r->body.find("\"1\"]") != std::string::npos;
      },
      absl::Seconds(60)))
      << "Prometheus never scraped the host; agent log: "
      << *ReadFile(dir + "/agent.log");
  absl::SleepFor(absl::Seconds(3));
  EXPECT_TRUE(Disjoint(AlertmanagerActive(am), kCrossing));
  EXPECT_TRUE(Disjoint(PrometheusFiring(prom), kCrossing));

  // Crossing: 400,000 threads on this PREEMPT_NONE 6.16 host.
  SetThreads(root, 400000);
  EXPECT_TRUE(
      Eventually([&] { return Contains(AlertmanagerActive(am), kCrossing); },
                 absl::Seconds(60)))
      << "Alertmanager has: " << AlertmanagerActive(am).size()
      << " alerts; server log: " << *ReadFile(server->log_path);
  EXPECT_TRUE(
      Eventually([&] { return Contains(AlertmanagerActive(am2), kCrossing); },
                 absl::Seconds(60)))
      << "the second Alertmanager has: " << AlertmanagerActive(am2).size();
  EXPECT_TRUE(
      Eventually([&] { return Contains(PrometheusFiring(prom), kCrossing); },
                 absl::Seconds(60)))
      << "Prometheus firing: " << PrometheusFiring(prom).size();

  // The server's real /metrics, with hosts and firing alerts in it, passes
  // Prometheus' own linter.
  absl::StatusOr<HttpResponse> metrics = tracehealth::HttpGet(
      absl::StrCat("http://", server->metrics_addr, "/metrics"),
      absl::Seconds(5));
  ASSERT_TRUE(metrics.ok() && metrics->status == 200);
  EXPECT_NE(metrics->body.find("tracehealth_alerts{"), std::string::npos);
  ASSERT_TRUE(WriteFile(dir + "/metrics.txt", metrics->body).ok());
  absl::StatusOr<std::unique_ptr<Subprocess>> lint =
      Subprocess::Start({"/bin/sh", "-c", "promtool check metrics < \"$0\"",
                         dir + "/metrics.txt"},
                        dir + "/promtool.log");
  ASSERT_TRUE(lint.ok());
  EXPECT_EQ((*lint)->Wait(absl::Seconds(30)).value_or(-1), 0)
      << ReadFile(dir + "/promtool.log").value_or("");
  EXPECT_EQ(ReadFile(dir + "/promtool.log").value_or("?"), "");

  // Recovery: back to 2,000 threads; both sides resolve.
  SetThreads(root, 2000);
  EXPECT_TRUE(
      Eventually([&] { return Disjoint(AlertmanagerActive(am), kCrossing); },
                 absl::Seconds(60)));
  EXPECT_TRUE(
      Eventually([&] { return Disjoint(AlertmanagerActive(am2), kCrossing); },
                 absl::Seconds(60)));
  EXPECT_TRUE(
      Eventually([&] { return Disjoint(PrometheusFiring(prom), kCrossing); },
                 absl::Seconds(60)));

  // The server's own view: resolved alerts are listed as such.
  (*agent)->Signal(SIGTERM).IgnoreError();
  EXPECT_EQ((*agent)->Wait(absl::Seconds(20)).value_or(-1), 0);
}

}  // namespace
}  // namespace tracehealth::testing
