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

}  // namespace
}  // namespace tracehealth
