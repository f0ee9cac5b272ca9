#include "server/query/rollout_plan.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(RolloutPlanTest, ClassesAndTheirBoundaries) {
  const double below = std::nextafter(2.0, 0.0);
  // Risk decides first: unknown, then warning or worse, whatever the latency.
  EXPECT_EQ(ClassifyForPlan(v1::RISK_UNKNOWN, 0.001, 2),
            v1::PLAN_CLASS_UNKNOWN);
  EXPECT_EQ(ClassifyForPlan(v1::RISK_STALL, 0.5, 2),
            v1::PLAN_CLASS_LOCKUP_RISK);
  EXPECT_EQ(ClassifyForPlan(v1::RISK_WARNING, 0.5, 2),
            v1::PLAN_CLASS_LOCKUP_RISK);
  // Latency only: over the budget from exactly the budget on.
  EXPECT_EQ(ClassifyForPlan(v1::RISK_LATENCY, 2.0, 2),
            v1::PLAN_CLASS_OVER_BUDGET);
  EXPECT_EQ(ClassifyForPlan(v1::RISK_LATENCY, below, 2), v1::PLAN_CLASS_SAFE);
  EXPECT_EQ(ClassifyForPlan(v1::RISK_NONE, 0.05, 2), v1::PLAN_CLASS_SAFE);
  EXPECT_EQ(ClassifyForPlan(v1::RISK_NONE, 0.05, 0.05),
            v1::PLAN_CLASS_OVER_BUDGET);
}

v1::PlanOptions Options(int64_t seconds, uint32_t ids) {
  v1::PlanOptions o;
  o.mutable_max_latency()->set_seconds(seconds);
  o.set_wave_host_ids(ids);
  return o;
}

TEST(RolloutPlanTest, WavesListTheLeastLatencyHostsAcrossMergedBuilders) {
  PlanBuilder a(Options(2, 2)), b(Options(2, 2));
  EXPECT_EQ(a.max_latency_seconds(), 2.0);
  a.Add("s3", v1::RISK_NONE, 0.3);
  a.Add("s1", v1::RISK_NONE, 0.1);
  b.Add("s0", v1::RISK_NONE, 0.1);  // ties s1: by id
  b.Add("s9", v1::RISK_LATENCY, 1.9);
  EXPECT_EQ(b.Add("o1", v1::RISK_LATENCY, 7), v1::PLAN_CLASS_OVER_BUDGET);
  a.Merge(std::move(b));
  v1::RolloutPlan p = a.Finish();
  EXPECT_EQ(p.safe(), 4u);
  EXPECT_EQ(p.over_budget(), 1u);
  EXPECT_EQ(p.lockup_risk(), 0u);
  EXPECT_EQ(p.unknown(), 0u);
  ASSERT_EQ(p.waves_size(), 2);
  EXPECT_EQ(p.waves(0).hosts(), 4u);
  EXPECT_EQ(p.waves(0).max_latency_seconds(), 1.9);
  ASSERT_EQ(p.waves(0).host_ids_size(), 2);
  EXPECT_EQ(p.waves(0).host_ids(0), "s0");
  EXPECT_EQ(p.waves(0).host_ids(1), "s1");
  EXPECT_EQ(p.waves(1).number(), 2u);
  EXPECT_EQ(p.waves(1).plan_class(), v1::PLAN_CLASS_OVER_BUDGET);
  EXPECT_EQ(p.waves(1).max_latency_seconds(), 7.0);
  EXPECT_EQ(p.waves(1).action(),
            "attach outside peak: the attaching call blocks up to 7.00 s, "
            "over the budget of 2.00 s (latency only)");
}

TEST(RolloutPlanTest, NoHostsNoWaves) {
  PlanBuilder empty(Options(1, 10));
  v1::RolloutPlan p = empty.Finish();
  EXPECT_EQ(p.waves_size(), 0);
  EXPECT_EQ(p.max_latency().seconds(), 1);
}

TEST(RolloutPlanTest, OptionsAreChecked) {
  EXPECT_TRUE(CheckPlanOptions(Options(2, 0)).ok());
  EXPECT_TRUE(CheckPlanOptions(Options(2, kMaxWaveHostIds)).ok());
  EXPECT_FALSE(CheckPlanOptions(Options(2, kMaxWaveHostIds + 1)).ok());
  EXPECT_FALSE(CheckPlanOptions(Options(0, 0)).ok());
  EXPECT_FALSE(CheckPlanOptions(v1::PlanOptions()).ok());
  v1::PlanOptions one_ns;
  one_ns.mutable_max_latency()->set_nanos(1);
  EXPECT_TRUE(CheckPlanOptions(one_ns).ok());
}

}  // namespace
}  // namespace tracehealth::server
