// A small alert storm against a real Alertmanager (Debian's package) on
// loopback: 300 load-generator hosts report once to the real server with the
// shipped rules (`for:` set to 0s); every firing alert reaches Alertmanager
// exactly once, in posts of at most --alertmanager_max_batch_alerts=40.
// Then Alertmanager is stopped (posts fail), 200 more hosts alert, and
// Alertmanager restarts with its memory of alerts gone: the server's
// retries and resends bring it back to exactly the server's firing set.
// The fleet-size version with figures: //tests/server:alert_storm_benchmark.
#include <cmath>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/server/server_process.h"
#include "tests/util/alertmanager_process.h"
#include "tests/util/eventually.h"
#include "tests/util/ports.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"

namespace tracehealth::testing {
namespace {

using AlertKey = std::pair<std::string, std::string>;  // alertname, host

std::string NoWait(const std::string& rules) {
  return absl::StrReplaceAll(rules,
                             {{"for: 5m", "for: 0s"}, {"for: 15m", "for: 0s"}});
}

// The value of label `name` in a text-format sample line.
std::string LabelOf(absl::string_view line, absl::string_view name) {
  const std::string key = absl::StrCat(name, "=\"");
  size_t p = line.find(key);
  if (p == absl::string_view::npos) return "";
  p += key.size();
  return std::string(line.substr(p, line.find('"', p) - p));
}

// Samples of /metrics: the firing (alertname, host) pairs of
// tracehealth_alerts and the value of each other sample line by its text.
struct Scrape {
  std::set<AlertKey> firing;
  std::map<std::string, double> values;
};

Scrape ScrapeMetrics(const std::string& addr) {
  Scrape s;
  absl::StatusOr<std::string> body = HttpGet(addr, "/metrics");
  if (!body.ok()) return s;
  for (absl::string_view line : absl::StrSplit(*body, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    double v = 0;
    if (sp == absl::string_view::npos ||
        !absl::SimpleAtod(line.substr(sp + 1), &v)) {
      continue;
    }
    s.values[std::string(line.substr(0, sp))] = v;
    if (absl::StartsWith(line, "tracehealth_alerts{") &&
        LabelOf(line, "alertstate") == "firing") {
      s.firing.insert({LabelOf(line, "alertname"), LabelOf(line, "host")});
    }
  }
  return s;
}

void Load(const std::string& server, int first_host, int hosts) {
  server::LoadOptions o;
  o.server = server;
  o.first_host = first_host;
  o.hosts = hosts;
  o.reports_per_host = 1;
  o.duration = absl::Seconds(120);
  absl::StatusOr<server::LoadResult> r = server::RunLoad(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->acked, static_cast<uint64_t>(hosts)) << r->first_error;
}

// Alertmanager's active alerts equal `want`, each listed once.
bool Matches(int am_port, const std::set<AlertKey>& want) {
  absl::StatusOr<std::map<AlertKey, int>> have = ActiveAlerts(am_port);
  if (!have.ok() || have->size() != want.size()) return false;
  for (const auto& [key, n] : *have) {
    if (n != 1 || want.count(key) == 0) return false;
  }
  return true;
}

TEST(AlertStormTest, EveryAlertOnceInBatchesThroughAnAlertmanagerRestart) {
  const std::string dir = NewTempDir("storm");
  const int am_port = PickFreePort();
  ASSERT_GT(am_port, 0);
  absl::StatusOr<std::unique_ptr<Subprocess>> am =
      StartAlertmanager(dir + "/am", am_port);
  ASSERT_TRUE(am.ok()) << am.status();

  absl::StatusOr<std::string> rules =
      ReadFile(Runfile("deploy/alerts/rules.yaml"));
  ASSERT_TRUE(rules.ok());
  ASSERT_TRUE(WriteFile(dir + "/rules.yaml", NoWait(*rules)).ok());
  std::filesystem::create_directories(dir + "/server");
  absl::StatusOr<ServerProcess> server = StartServer(
      dir + "/server",
      {"--alert_rules=" + dir + "/rules.yaml",
       absl::StrCat("--alertmanager_url=http://127.0.0.1:", am_port),
       "--alert_eval_interval=1s", "--alert_resend_interval=3s",
       "--alertmanager_max_batch_alerts=40"});
  ASSERT_TRUE(server.ok()) << server.status();

  Load(server->grpc_addr, 0, 300);
  // The server's firing set (300 hosts: all under --metrics_max_hosts).
  std::set<AlertKey> firing;
  ASSERT_TRUE(Eventually(
      [&] {
        Scrape s = ScrapeMetrics(server->metrics_addr);
        if (s.firing.empty() || s.firing != firing) {
          firing = s.firing;
          return false;
        }
        return true;  // the same set on two scrapes in a row
      },
      absl::Seconds(30)));
  // The load generator's hosts alert: most of 300 (each at most twice).
  ASSERT_GT(firing.size(), 200u);
  ASSERT_TRUE(
      Eventually([&] { return Matches(am_port, firing); }, absl::Seconds(30)))
      << "Alertmanager lists " << ActiveAlerts(am_port)->size() << " of "
      << firing.size();
  Scrape s = ScrapeMetrics(server->metrics_addr);
  const double ok =
      s.values["tracehealth_alertmanager_posts_total{result=\"ok\"}"];
  // In posts of at most 40 alerts: at least ceil(n / 40) of them.
  EXPECT_GE(ok, std::ceil(firing.size() / 40.0));
  EXPECT_EQ(s.values["tracehealth_alertmanager_alerts_dropped_total"], 0);

  // Alertmanager stops; 200 more hosts alert meanwhile.
  ASSERT_TRUE((*am)->Signal(SIGTERM).ok());
  ASSERT_TRUE((*am)->Wait(absl::Seconds(30)).ok());
  Load(server->grpc_addr, 300, 200);
  ASSERT_TRUE(Eventually(
      [&] {
        return ScrapeMetrics(server->metrics_addr)
                   .values
                       ["tracehealth_alertmanager_posts_total{result="
                        "\"failed\"}"] > 0;
      },
      absl::Seconds(30)));
  std::set<AlertKey> all;
  ASSERT_TRUE(Eventually(
      [&] {
        Scrape s = ScrapeMetrics(server->metrics_addr);
        if (s.firing.size() <= firing.size() || s.firing != all) {
          all = s.firing;
          return false;
        }
        return true;
      },
      absl::Seconds(30)));
  // Restarted, it holds none of the earlier alerts until they are resent.
  absl::StatusOr<std::unique_ptr<Subprocess>> again =
      StartAlertmanager(dir + "/am", am_port);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(
      Eventually([&] { return Matches(am_port, all); }, absl::Seconds(60)))
      << "Alertmanager lists " << ActiveAlerts(am_port)->size() << " of "
      << all.size();
}

}  // namespace
}  // namespace tracehealth::testing
