#include "server/alerts/engine.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

std::vector<AlertRule> Rules() {
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(R"(
rules:
  - name: Slow
    condition: predictions.attach[kprobe_multi_return].latency_seconds > 5
    for: 5m
    annotations:
      summary: "{{host}} {{value}} > {{threshold}}"
  - name: Now
    condition: predictions.vmap_purge.purge_seconds > 20
    severity: critical
  - name: Silent
    condition: host.silent_intervals >= 3
)");
  EXPECT_TRUE(rules.ok()) << rules.status();
  return *rules;
}

v1::HostReport Report(const std::string& host, double attach_s,
                      double purge_s = 1) {
  v1::HostReport r;
  r.set_host_id(host);
  r.set_interval_seconds(15);
  (*r.mutable_labels())["rack"] = "r1";
  v1::AttachPrediction* a = r.mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_latency_seconds(attach_s);
  r.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(purge_s);
  return r;
}

const absl::Time t0 = absl::FromUnixSeconds(1800000000);

TEST(AlertEngineTest, PendingThenFiringAfterForThenResolved) {
  AlertEngine engine(Rules());
  std::vector<v1::Alert> c = engine.OnReport(Report("h1", 9), nullptr, t0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule(), "Slow");
  EXPECT_EQ(c[0].state(), v1::ALERT_STATE_PENDING);
  EXPECT_EQ(c[0].annotations().at("summary"), "h1 9 > 5");
  EXPECT_EQ(c[0].labels().at("alertname"), "Slow");
  EXPECT_EQ(c[0].labels().at("host"), "h1");

  // Still matching but `for` not elapsed: nothing changes.
  EXPECT_TRUE(
      engine.OnReport(Report("h1", 9), nullptr, t0 + absl::Minutes(4)).empty());
  EXPECT_TRUE(engine.Tick(t0 + absl::Minutes(4), {}).empty());
  // `for` elapsed: Tick promotes without a new report.
  c = engine.Tick(t0 + absl::Minutes(5), {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state(), v1::ALERT_STATE_FIRING);
  EXPECT_EQ(c[0].fired_at().seconds(),
            absl::ToUnixSeconds(t0 + absl::Minutes(5)));
  EXPECT_TRUE(engine.Tick(t0 + absl::Minutes(6), {}).empty());

  c = engine.OnReport(Report("h1", 2), nullptr, t0 + absl::Minutes(7));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state(), v1::ALERT_STATE_RESOLVED);
  EXPECT_EQ(c[0].resolved_at().seconds(),
            absl::ToUnixSeconds(t0 + absl::Minutes(7)));
  EXPECT_EQ(engine.Alerts().size(), 1u);
  // Resolved alerts are forgotten after keep_resolved (15 min).
  engine.Tick(t0 + absl::Minutes(30), {});
  EXPECT_TRUE(engine.Alerts().empty());
}

TEST(AlertEngineTest, ZeroForFiresAtOnce) {
  AlertEngine engine(Rules());
  std::vector<v1::Alert> c = engine.OnReport(Report("h1", 1, 30), nullptr, t0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule(), "Now");
  EXPECT_EQ(c[0].state(), v1::ALERT_STATE_FIRING);
  EXPECT_EQ(c[0].severity(), "critical");
}

TEST(AlertEngineTest, FlappingFasterThanForNeverFires) {
  AlertEngine engine(Rules());
  for (int i = 0; i < 20; ++i) {
    absl::Time t = t0 + absl::Minutes(2 * i);
    double latency = (i % 2 == 0) ? 9 : 1;
    for (const v1::Alert& a :
         engine.OnReport(Report("h1", latency), nullptr, t)) {
      EXPECT_NE(a.state(), v1::ALERT_STATE_FIRING) << "flap " << i;
      EXPECT_NE(a.state(), v1::ALERT_STATE_RESOLVED) << "flap " << i;
    }
    for (const v1::Alert& a : engine.Tick(t + absl::Minutes(1), {})) {
      EXPECT_NE(a.state(), v1::ALERT_STATE_FIRING);
    }
  }
}

TEST(AlertEngineTest, HostsAreIndependent) {
  AlertEngine engine(Rules());
  engine.OnReport(Report("h1", 9), nullptr, t0);
  engine.OnReport(Report("h2", 1), nullptr, t0);
  std::vector<v1::Alert> c = engine.Tick(t0 + absl::Minutes(5), {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].host_id(), "h1");
}

TEST(AlertEngineTest, SilentHostFiresAndReportResolves) {
  AlertEngine engine(Rules());
  v1::HostReport r = Report("h1", 1);
  engine.OnReport(r, nullptr, t0);
  HostLiveness h{"h1", 15, t0, server::LabelSet()};
  EXPECT_TRUE(engine.Tick(t0 + absl::Seconds(44), {h}).empty());
  std::vector<v1::Alert> c = engine.Tick(t0 + absl::Seconds(46), {h});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule(), "Silent");
  EXPECT_EQ(c[0].state(), v1::ALERT_STATE_FIRING);
  c = engine.OnReport(r, nullptr, t0 + absl::Seconds(60));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state(), v1::ALERT_STATE_RESOLVED);
}

TEST(AlertEngineTest, IncreasedFromThePreviousValue) {
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(R"(
rules:
  - name: Slow
    condition: predictions.attach[kprobe_multi_return].latency_seconds > 5
  - name: Dropping
    condition: health.spool_dropped_total increased
)");
  ASSERT_TRUE(rules.ok());
  AlertEngine engine(*rules);
  EXPECT_FALSE(engine.has_silence_rules());
  v1::HostReport r = Report("h1", 1);
  r.mutable_health()->set_spool_dropped_total(3);
  // Rule 1 (Dropping) saw 3 before: no increase; 2 before: an increase.
  const std::optional<double> same[] = {std::nullopt, 3.0};
  EXPECT_TRUE(engine.OnReport(r, same, t0).empty());
  const std::optional<double> less[] = {std::nullopt, 2.0};
  std::vector<v1::Alert> c = engine.OnReport(r, less, t0);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rule(), "Dropping");
  EXPECT_EQ(c[0].value(), 3.0);
  EXPECT_TRUE(AlertEngine(Rules()).has_silence_rules());
}

TEST(AlertEngineTest, RestoreKeepsStateWithoutRenotifying) {
  std::vector<v1::Alert> stored;
  {
    AlertEngine engine(Rules());
    engine.OnReport(Report("h1", 9), nullptr, t0);
    engine.Tick(t0 + absl::Minutes(5), {});
    stored = engine.Alerts();
  }
  ASSERT_EQ(stored.size(), 1u);
  ASSERT_EQ(stored[0].state(), v1::ALERT_STATE_FIRING);
  AlertEngine restarted(Rules());
  restarted.Restore(stored);
  // Still firing after the restart: a matching report changes nothing.
  EXPECT_TRUE(
      restarted.OnReport(Report("h1", 9), nullptr, t0 + absl::Minutes(6))
          .empty());
  EXPECT_TRUE(restarted.Tick(t0 + absl::Minutes(7), {}).empty());
  std::vector<v1::Alert> c =
      restarted.OnReport(Report("h1", 1), nullptr, t0 + absl::Minutes(8));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state(), v1::ALERT_STATE_RESOLVED);
  EXPECT_EQ(c[0].fired_at().seconds(), stored[0].fired_at().seconds());
  // Alerts of rules that no longer exist are ignored.
  v1::Alert old = stored[0];
  old.set_rule("Removed");
  AlertEngine other(Rules());
  other.Restore({old});
  EXPECT_TRUE(other.Alerts().empty());
}

}  // namespace
}  // namespace tracehealth
