// The shipped alert rules (deploy/alerts/rules.yaml) rendered for reports of
// fixture hosts, made by the real agent (--once --format=json): every
// summary and description, word for word. A rule added to the file without
// an expectation here fails the test.
//
// The figures come from the fixtures (tests/fixtures/hosts/*):
// - preempt-none-6.16-240k: a kprobe_multi return attach walks 240,000
//   threads on PREEMPT_NONE, 79.8612 s (rendered in four digits: 79.86),
//   above the rule's 5 s; every fgraph kind is RISK_STALL.
// - kasan-6.12-256cpu: the stack depot holds 0.970459 of its pools (97%);
//   the vmap purge takes 23.87 s on 256 CPUs before flush combining,
//   23.87 / (2 * watchdog_thresh 10 s) = 1.1935 -> "1.194x its 20 s".
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/alerts/engine.h"
#include "server/alerts/rules.h"
#include "tests/util/subprocess.h"

namespace tracehealth {
namespace {

using testing::NewTempDir;
using testing::ReadFile;
using testing::Runfile;

// The agent's report of fixture host `name` (its host id is `name`).
v1::HostReport FixtureReport(const std::string& name) {
  const std::string out = NewTempDir("agent") + "/report.json";
  auto agent = testing::Subprocess::Start(
      {"/bin/sh", "-c",
       absl::StrCat("'", Runfile("agent/tracehealth-agent"), "' --once ",
                    "--format=json --root='",
                    Runfile("tests/fixtures/hosts/" + name),
                    "' --host_id=", name, " --state_dir='", NewTempDir("state"),
                    "' > '", out, "'")});
  EXPECT_TRUE(agent.ok()) << agent.status();
  v1::HostReport r;
  if (!agent.ok()) return r;
  auto rc = (*agent)->Wait(absl::Seconds(60));
  EXPECT_TRUE(rc.ok() && *rc == 0) << name;
  auto json = ReadFile(out);
  EXPECT_TRUE(json.ok()) << json.status();
  if (json.ok()) {
    auto st = google::protobuf::util::JsonStringToMessage(*json, &r);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return r;
}

std::vector<AlertRule> ShippedRules() {
  auto yaml = ReadFile(Runfile("deploy/alerts/rules.yaml"));
  EXPECT_TRUE(yaml.ok()) << yaml.status();
  auto rules = ParseAlertRules(yaml.ok() ? *yaml : "");
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() ? *rules : std::vector<AlertRule>();
}

// rule -> annotation -> text, for every alert the engine holds.
using Rendered = std::map<std::string, std::map<std::string, std::string>>;
Rendered Annotations(const AlertEngine& engine, const std::string& host) {
  Rendered out;
  for (const v1::Alert& a : engine.Alerts()) {
    if (a.host_id() != host) continue;
    for (const auto& [k, v] : a.annotations()) out[a.rule()][k] = v;
  }
  return out;
}

TEST(ShippedRulesTest, EveryRuleRendersTheRightFigures) {
  const std::vector<AlertRule> rules = ShippedRules();
  ASSERT_FALSE(rules.empty());
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  std::set<std::string> checked;

  {
    const std::string host = "preempt-none-6.16-240k";
    AlertEngine engine(rules);
    engine.OnReport(FixtureReport(host), nullptr, now);
    Rendered got = Annotations(engine, host);
    EXPECT_EQ(got["TracehealthAttachLatencyHigh"]["summary"],
              host +
                  ": a BPF kprobe_multi return attach would block for "
                  "79.86 s");
    EXPECT_EQ(got["TracehealthAttachLatencyHigh"]["description"],
              "The first fgraph user on " + host +
                  " walks every thread's shadow stack: predicted 79.86 s, "
                  "above 5 s. Attach off-peak, or attach while another fgraph "
                  "user is active.");
    EXPECT_EQ(got["TracehealthAttachStallRisk"]["summary"],
              host +
                  ": attaching a function-graph user would trip the "
                  "soft-lockup or RCU-stall watchdog");
    EXPECT_EQ(got["TracehealthAttachStallRisk"]["description"],
              "On this non-preemptible kernel the shadow-stack walk runs "
              "without yielding for longer than the watchdog threshold. Do "
              "not enable function_graph or return probes on " +
                  host + " without a maintenance window.");
    checked.insert(
        {"TracehealthAttachLatencyHigh", "TracehealthAttachStallRisk"});
  }
  {
    const std::string host = "kasan-6.12-256cpu";
    v1::HostReport report = FixtureReport(host);
    AlertEngine engine(rules);
    // The fixture's depot does not grow (one reading): given 2 h to go.
    v1::HostReport growing = report;
    growing.mutable_predictions()
        ->mutable_stack_depot()
        ->set_seconds_to_exhaustion(7200);
    // The spool dropped 5 reports since the previous one.
    v1::HostReport previous = growing;
    growing.mutable_health()->set_spool_dropped_total(5);
    previous.mutable_health()->set_spool_dropped_total(0);
    engine.OnReport(growing, &previous, now);
    // 50 s without a report at a 15 s interval: 3.333 intervals.
    engine.Tick(now + absl::Seconds(50),
                {{host, growing.interval_seconds(), now, server::LabelSet()}});
    Rendered got = Annotations(engine, host);
    EXPECT_EQ(got["TracehealthStackDepotBudgetHigh"]["summary"],
              host + ": stack depot uses 97% of its pool budget");
    EXPECT_EQ(got["TracehealthStackDepotBudgetHigh"]["description"],
              "When the pools are full, new KASAN/page_owner stack traces get "
              "no handle and later bug reports lose their history. Raise "
              "stack_depot_max_pools (6.17+) or reboot.");
    EXPECT_EQ(got["TracehealthStackDepotExhaustionSoon"]["summary"],
              host +
                  ": stack depot pool budget exhausted in 7200 s at the "
                  "current growth");
    EXPECT_EQ(got["TracehealthVmapPurgeLockupRisk"]["summary"],
              host +
                  ": a KASAN vmalloc purge would run 23.87 s and trip the "
                  "soft-lockup watchdog (1.194x its 20 s threshold)");
    EXPECT_EQ(got["TracehealthHostSilent"]["summary"],
              host + ": no report for 3.333 report intervals");
    EXPECT_EQ(got["TracehealthAgentSpoolDropping"]["summary"],
              host +
                  ": the agent's spool is full and dropping reports (5 "
                  "dropped)");
    checked.insert({"TracehealthStackDepotBudgetHigh",
                    "TracehealthStackDepotExhaustionSoon",
                    "TracehealthVmapPurgeLockupRisk", "TracehealthHostSilent",
                    "TracehealthAgentSpoolDropping"});
  }
  // Every shipped rule, and each of its annotations, was checked above.
  std::set<std::string> shipped;
  for (const AlertRule& r : rules) shipped.insert(r.name);
  EXPECT_EQ(shipped, checked);
}

}  // namespace
}  // namespace tracehealth
