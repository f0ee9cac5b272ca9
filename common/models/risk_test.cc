#include "common/models/risk.h"

#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

struct Assessed {
  v1::Risk risk;
  std::vector<v1::ThresholdCheck> checks;
  std::optional<double> lowest_stall_threshold;
};

Assessed Assess(const StallInput& in, const v1::Thresholds& t) {
  google::protobuf::RepeatedPtrField<v1::ThresholdCheck> checks;
  StallAssessment a = AssessStall(in, t, &checks);
  return {a.risk, std::vector<v1::ThresholdCheck>(checks.begin(), checks.end()),
          a.lowest_stall_threshold};
}

TEST(RiskTest, NonPreemptibleStallWarningAndNone) {
  v1::Thresholds t;  // defaults: 20 s soft lockup, 21 s RCU
  StallInput in;
  in.preempt_mode = v1::PREEMPT_MODE_VOLUNTARY;
  in.non_yielding_seconds = in.blocking_seconds = 25;
  Assessed a = Assess(in, t);
  EXPECT_EQ(a.risk, v1::RISK_STALL);
  ASSERT_EQ(a.checks.size(), 2u);
  EXPECT_EQ(a.checks[0].kind(), v1::ThresholdCheck::KIND_SOFT_LOCKUP);
  EXPECT_DOUBLE_EQ(a.checks[0].threshold(), 20);
  EXPECT_DOUBLE_EQ(a.checks[0].margin(), 25.0 / 20);
  EXPECT_EQ(a.checks[1].kind(), v1::ThresholdCheck::KIND_RCU_STALL);
  EXPECT_DOUBLE_EQ(a.checks[1].threshold(), 21);
  EXPECT_TRUE(a.checks[1].applies());
  EXPECT_DOUBLE_EQ(*a.lowest_stall_threshold, 20);

  in.non_yielding_seconds = in.blocking_seconds = 10;  // margin 0.5
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_WARNING);
  in.non_yielding_seconds = in.blocking_seconds = 9;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_LATENCY);
  in.non_yielding_seconds = in.blocking_seconds = 0.01;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_NONE);
}

TEST(RiskTest, PreemptibleIsLatencyOnly) {
  v1::Thresholds t;
  StallInput in;
  in.preempt_mode = v1::PREEMPT_MODE_LAZY;
  in.non_yielding_seconds = in.blocking_seconds = 227;
  Assessed a = Assess(in, t);
  EXPECT_EQ(a.risk, v1::RISK_LATENCY);
  for (const auto& c : a.checks) EXPECT_FALSE(c.applies());
  EXPECT_FALSE(a.lowest_stall_threshold.has_value());
}

TEST(RiskTest, MeasuredThresholdsAndPanics) {
  v1::Thresholds t;
  t.set_watchdog_thresh_seconds(60);
  t.set_softlockup_panic(true);
  t.set_rcu_cpu_stall_timeout_seconds(60);
  StallInput in;
  in.preempt_mode = v1::PREEMPT_MODE_NONE;
  in.non_yielding_seconds = in.blocking_seconds = 65;
  Assessed a = Assess(in, t);
  EXPECT_EQ(a.risk, v1::RISK_STALL);  // RCU at 60 s
  EXPECT_DOUBLE_EQ(a.checks[0].threshold(), 120);
  EXPECT_TRUE(a.checks[0].panics());
  EXPECT_FALSE(a.checks[1].panics());
  // watchdog disabled: only RCU remains.
  t.set_watchdog_thresh_seconds(0);
  a = Assess(in, t);
  ASSERT_EQ(a.checks.size(), 1u);
  EXPECT_EQ(a.checks[0].kind(), v1::ThresholdCheck::KIND_RCU_STALL);
}

TEST(RiskTest, UnknownModeOnlyWhenItMatters) {
  v1::Thresholds t;
  StallInput in;
  in.non_yielding_seconds = in.blocking_seconds = 30;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_UNKNOWN);
  in.non_yielding_seconds = in.blocking_seconds = 0.5;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_LATENCY);
}

TEST(RiskTest, YieldingWorkNeverStalls) {
  v1::Thresholds t;
  StallInput in;
  in.preempt_mode = v1::PREEMPT_MODE_NONE;
  in.yields = true;
  in.non_yielding_seconds = in.blocking_seconds = 30;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_LATENCY);
}

TEST(RiskTest, LatencyBudget) {
  v1::Thresholds t;
  StallInput in;
  in.preempt_mode = v1::PREEMPT_MODE_FULL;
  in.non_yielding_seconds = in.blocking_seconds = 0.05;
  in.latency_budget_seconds = 0.02;
  Assessed a = Assess(in, t);
  EXPECT_EQ(a.risk, v1::RISK_LATENCY);
  EXPECT_EQ(a.checks.back().kind(), v1::ThresholdCheck::KIND_LATENCY);
  EXPECT_DOUBLE_EQ(a.checks.back().margin(), 2.5);
}

// Every preemption model: NONE and VOLUNTARY cannot preempt the work (the
// checks apply), FULL, LAZY and RT can (latency only), UNKNOWN cannot be
// told and is shown as if non-preemptible without applying.
TEST(RiskTest, EveryPreemptionModel) {
  EXPECT_EQ(PreemptibilityOf(v1::PREEMPT_MODE_NONE),
            Preemptibility::kNonPreemptible);
  EXPECT_EQ(PreemptibilityOf(v1::PREEMPT_MODE_VOLUNTARY),
            Preemptibility::kNonPreemptible);
  EXPECT_EQ(PreemptibilityOf(v1::PREEMPT_MODE_FULL),
            Preemptibility::kPreemptible);
  EXPECT_EQ(PreemptibilityOf(v1::PREEMPT_MODE_LAZY),
            Preemptibility::kPreemptible);
  EXPECT_EQ(PreemptibilityOf(v1::PREEMPT_MODE_RT),
            Preemptibility::kPreemptible);
  EXPECT_EQ(PreemptibilityOf(v1::PREEMPT_MODE_UNKNOWN),
            Preemptibility::kUnknown);

  // 30 s without a reschedule point: 30 / 20 = 1.5 over the soft lockup.
  v1::Thresholds t;
  StallInput in;
  in.non_yielding_seconds = in.blocking_seconds = 30;
  struct Case {
    v1::PreemptMode mode;
    v1::Risk risk;
    bool applies;
  };
  for (const Case& c :
       {Case{v1::PREEMPT_MODE_NONE, v1::RISK_STALL, true},
        Case{v1::PREEMPT_MODE_VOLUNTARY, v1::RISK_STALL, true},
        Case{v1::PREEMPT_MODE_FULL, v1::RISK_LATENCY, false},
        Case{v1::PREEMPT_MODE_LAZY, v1::RISK_LATENCY, false},
        Case{v1::PREEMPT_MODE_RT, v1::RISK_LATENCY, false},
        Case{v1::PREEMPT_MODE_UNKNOWN, v1::RISK_UNKNOWN, false}}) {
    in.preempt_mode = c.mode;
    SCOPED_TRACE(v1::PreemptMode_Name(c.mode));
    Assessed a = Assess(in, t);
    EXPECT_EQ(a.risk, c.risk);
    ASSERT_EQ(a.checks.size(), 2u);
    EXPECT_EQ(a.checks[0].applies(), c.applies);
    EXPECT_DOUBLE_EQ(a.checks[0].margin(), 30.0 / 20);
    EXPECT_DOUBLE_EQ(a.checks[1].margin(), 30.0 / 21);
    EXPECT_EQ(a.lowest_stall_threshold.has_value(), c.applies);
  }
}

// Both sides of each risk boundary: margin 1 is a stall, 0.5 a warning,
// 0.1 s of blocking is latency.
TEST(RiskTest, BoundariesOnBothSides) {
  v1::Thresholds t;
  t.set_watchdog_thresh_seconds(10);        // soft lockup at 2 * 10 = 20 s
  t.set_rcu_cpu_stall_timeout_seconds(40);  // above it: the soft check rules
  StallInput in;
  in.preempt_mode = v1::PREEMPT_MODE_NONE;
  in.non_yielding_seconds = in.blocking_seconds = 20;  // 20 / 20 = 1
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_STALL);
  in.non_yielding_seconds = in.blocking_seconds = 19.999;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_WARNING);
  in.non_yielding_seconds = in.blocking_seconds = 10;  // 10 / 20 = 0.5
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_WARNING);
  in.non_yielding_seconds = in.blocking_seconds = 9.999;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_LATENCY);
  // Preemptible: only the blocking time counts, noticeable from 0.1 s.
  in.preempt_mode = v1::PREEMPT_MODE_FULL;
  in.non_yielding_seconds = in.blocking_seconds = 0.1;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_LATENCY);
  in.non_yielding_seconds = in.blocking_seconds = 0.0999;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_NONE);
  // A budget of 0.05 s: reached at 0.05 (margin 0.05 / 0.05 = 1), not below.
  in.latency_budget_seconds = 0.05;
  in.non_yielding_seconds = in.blocking_seconds = 0.05;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_LATENCY);
  in.non_yielding_seconds = in.blocking_seconds = 0.0499;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_NONE);
  // Unknown mode: UNKNOWN from the warning margin (0.5 * 20 = 10 s) up.
  in.preempt_mode = v1::PREEMPT_MODE_UNKNOWN;
  in.latency_budget_seconds.reset();
  in.non_yielding_seconds = in.blocking_seconds = 10;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_UNKNOWN);
  in.non_yielding_seconds = in.blocking_seconds = 9.999;
  EXPECT_EQ(Assess(in, t).risk, v1::RISK_LATENCY);
}

// The hung-task detector: a hold of 120 s against the default 120 s timeout
// is a report (margin 1), 119.999 s is not; hung_task_panic makes it a
// panic; timeout 0 is off and an unread timeout is unknown, neither with a
// check.
TEST(RiskTest, HungTaskBoundariesPanicOffAndUnknown) {
  google::protobuf::RepeatedPtrField<v1::ThresholdCheck> checks;
  v1::Thresholds t;
  EXPECT_EQ(AssessHungTask(1000, t, &checks), v1::HUNG_TASK_RISK_UNKNOWN);
  EXPECT_EQ(checks.size(), 0);
  t.set_hung_task_timeout_seconds(0);
  t.set_hung_task_panic(true);
  EXPECT_EQ(AssessHungTask(1000, t, &checks), v1::HUNG_TASK_RISK_OFF);
  EXPECT_EQ(checks.size(), 0);

  t.set_hung_task_timeout_seconds(120);
  t.set_hung_task_panic(false);
  EXPECT_EQ(AssessHungTask(120, t, &checks), v1::HUNG_TASK_RISK_REPORTED);
  ASSERT_EQ(checks.size(), 1);
  EXPECT_EQ(checks[0].kind(), v1::ThresholdCheck::KIND_HUNG_TASK);
  EXPECT_DOUBLE_EQ(checks[0].threshold(), 120);
  EXPECT_DOUBLE_EQ(checks[0].predicted(), 120);
  EXPECT_DOUBLE_EQ(checks[0].margin(), 1);
  EXPECT_TRUE(checks[0].applies());
  EXPECT_FALSE(checks[0].panics());
  checks.Clear();
  EXPECT_EQ(AssessHungTask(119.999, t, &checks), v1::HUNG_TASK_RISK_NONE);
  ASSERT_EQ(checks.size(), 1);
  EXPECT_DOUBLE_EQ(checks[0].margin(), 119.999 / 120);
  EXPECT_TRUE(checks[0].applies());

  t.set_hung_task_panic(true);
  checks.Clear();
  EXPECT_EQ(AssessHungTask(120, t, &checks), v1::HUNG_TASK_RISK_PANIC);
  ASSERT_EQ(checks.size(), 1);
  EXPECT_TRUE(checks[0].panics());
  checks.Clear();
  // Below the timeout, hung_task_panic changes nothing but the check's flag.
  EXPECT_EQ(AssessHungTask(119.999, t, &checks), v1::HUNG_TASK_RISK_NONE);
  EXPECT_TRUE(checks[0].panics());
}

// The defaults: soft lockup at 2 * 10 s, RCU stall at 21 s.
TEST(RiskTest, DefaultThresholds) {
  v1::Thresholds t;
  EXPECT_DOUBLE_EQ(SoftLockupThresholdSeconds(t), 2 * 10.0);
  EXPECT_DOUBLE_EQ(RcuStallThresholdSeconds(t), 21.0);
  t.set_watchdog_thresh_seconds(4);
  t.set_rcu_cpu_stall_timeout_seconds(60);
  EXPECT_DOUBLE_EQ(SoftLockupThresholdSeconds(t), 2 * 4.0);
  EXPECT_DOUBLE_EQ(RcuStallThresholdSeconds(t), 60.0);
}

}  // namespace
}  // namespace tracehealth
