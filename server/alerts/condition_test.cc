#include "server/alerts/condition.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::HostReport Report() {
  v1::HostReport r;
  r.set_host_id("h1");
  r.set_interval_seconds(15);
  v1::AttachPrediction* fg = r.mutable_predictions()->add_attach();
  fg->set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  fg->set_latency_seconds(81.0);
  fg->set_risk(v1::RISK_STALL);
  v1::AttachPrediction* km = r.mutable_predictions()->add_attach();
  km->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  km->set_latency_seconds(3.5);
  km->set_risk(v1::RISK_LATENCY);
  r.mutable_predictions()->mutable_stack_depot()->set_budget_ratio(0.9);
  r.mutable_health()->set_spool_dropped_total(4);
  return r;
}

EvalResult Eval(const char* text, const v1::HostReport& r,
                const v1::HostReport* prev = nullptr, double silent = 0) {
  absl::StatusOr<Condition> c = Condition::Parse(text);
  EXPECT_TRUE(c.ok()) << c.status();
  if (!c.ok()) return {};
  return c->Evaluate({&r, prev, silent});
}

TEST(ConditionTest, SelectsRepeatedElementsByKind) {
  v1::HostReport r = Report();
  EvalResult e =
      Eval("predictions.attach[kprobe_multi_return].latency_seconds > 5", r);
  EXPECT_FALSE(e.matched);
  EXPECT_DOUBLE_EQ(*e.value, 3.5);
  e = Eval("predictions.attach[KPROBE_MULTI_RETURN].latency_seconds > 3", r);
  EXPECT_TRUE(e.matched);
  e = Eval("predictions.attach[function_graph_tracer].latency_seconds >= 81",
           r);
  EXPECT_TRUE(e.matched);
  EXPECT_DOUBLE_EQ(*e.value, 81.0);
}

TEST(ConditionTest, WildcardMatchesAnyElementAndEnumNames) {
  v1::HostReport r = Report();
  EvalResult e = Eval("predictions.attach[*].risk >= RISK_STALL", r);
  EXPECT_TRUE(e.matched);
  EXPECT_EQ(*e.value, v1::RISK_STALL);
  r.mutable_predictions()->mutable_attach(0)->set_risk(v1::RISK_WARNING);
  EXPECT_FALSE(Eval("predictions.attach[*].risk >= stall", r).matched);
  EXPECT_TRUE(Eval("predictions.attach[*].risk == RISK_LATENCY", r).matched);
}

TEST(ConditionTest, UnsetOptionalNeverMatches) {
  v1::HostReport r = Report();
  // seconds_to_exhaustion is unset: unknown, not 0 (which would be < 86400).
  EvalResult e =
      Eval("predictions.stack_depot.seconds_to_exhaustion < 86400", r);
  EXPECT_FALSE(e.matched);
  EXPECT_FALSE(e.value.has_value());
  r.mutable_predictions()->mutable_stack_depot()->set_seconds_to_exhaustion(
      3600);
  EXPECT_TRUE(
      Eval("predictions.stack_depot.seconds_to_exhaustion < 86400", r).matched);
  EXPECT_TRUE(Eval("predictions.stack_depot.budget_ratio > 0.8", r).matched);
}

TEST(ConditionTest, IncreasedComparesWithPreviousReport) {
  v1::HostReport prev = Report();
  v1::HostReport now = Report();
  EXPECT_FALSE(
      Eval("health.spool_dropped_total increased", now, &prev).matched);
  now.mutable_health()->set_spool_dropped_total(9);
  EXPECT_TRUE(Eval("health.spool_dropped_total increased", now, &prev).matched);
  EXPECT_FALSE(
      Eval("health.spool_dropped_total increased", now, nullptr).matched);
  // The previous value instead of the previous report: 4 -> 9 increased,
  // 9 -> 9 did not.
  absl::StatusOr<Condition> c =
      Condition::Parse("health.spool_dropped_total increased");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->is_increase());
  EXPECT_EQ(c->FirstValue(prev), 4.0);
  EvalInput in{&now, nullptr, 0};
  in.previous_value = 4;
  EXPECT_TRUE(c->Evaluate(in).matched);
  in.previous_value = 9;
  EXPECT_FALSE(c->Evaluate(in).matched);
  EXPECT_FALSE(Condition::Parse("host.silent_seconds > 1")->is_increase());
}

TEST(ConditionTest, SilenceIsMeasuredInIntervals) {
  v1::HostReport r = Report();
  EXPECT_FALSE(Eval("host.silent_intervals >= 3", r, nullptr, 44).matched);
  EvalResult e = Eval("host.silent_intervals >= 3", r, nullptr, 45);
  EXPECT_TRUE(e.matched);
  EXPECT_DOUBLE_EQ(*e.value, 3.0);
  r.set_interval_seconds(0);
  EXPECT_FALSE(
      Eval("host.silent_intervals >= 3", r, nullptr, 1e6).value.has_value());
  EXPECT_TRUE(Eval("host.silent_seconds > 60", r, nullptr, 61).matched);
  // Without a report, the interval is given.
  absl::StatusOr<Condition> c = Condition::Parse("host.silent_intervals >= 3");
  ASSERT_TRUE(c.ok());
  EvalInput in;
  in.silent_seconds = 45;
  in.interval_seconds = 15;
  EXPECT_TRUE(c->Evaluate(in).matched);
  in.silent_seconds = 44;
  EXPECT_FALSE(c->Evaluate(in).matched);
}

TEST(ConditionTest, RejectsBadConditions) {
  for (const char* bad : {
           "",
           "predictions.attach.latency_seconds > 5",  // repeated, no selector
           "predictions.attach[nonsense].latency_seconds > 5",  // unknown kind
           "predictions.nope > 1",                              // unknown field
           "predictions.stack_depot > 1",                       // not a leaf
           "predictions.attach[*].risk >= RISK_BANANA",    // unknown enum value
           "predictions.stack_depot.budget_ratio >> 1",    // bad op
           "predictions.stack_depot.budget_ratio > abc",   // bad number
           "predictions.stack_depot.budget_ratio > nan",   // not finite
           "host_id > 1",                                  // string leaf
           "labels > 1",                                   // map
           "predictions.stack_depot.budget_ratio[x] > 1",  // selector on scalar
           "host.silent_intervals increased",
       }) {
    EXPECT_FALSE(Condition::Parse(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace tracehealth
