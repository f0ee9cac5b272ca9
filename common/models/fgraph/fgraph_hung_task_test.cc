// The hung-task risk of an fgraph walk: ftrace_lock is held for the whole
// walk (and its patching), so whatever waits for it is reported hung once
// the hold passes hung_task_timeout_secs, whatever the preemption model.
#include <string>

#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/testing/model_hosts.h"
#include "common/models/testing/prediction_checks.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// Hung tasks: the seed's 400,000-thread PREEMPT_LAZY host (dynamic, B = 32,
// all NULL, no patching) holds ftrace_lock for the whole walk, 88.7 ns *
// 2,500,212,499 + 2 us * 12,500 + 20 ns * 400,000 = 221.8018 s: 1.8483x
// the default 120 s hung_task_timeout_secs. Whatever waits for the lock is
// reported hung, though the stall risk stays latency only; with
// hung_task_panic = 1 the kernel panics.
TEST(FgraphAttachTest, HungTaskOnTheSeedLazyRow) {
  const double walk = 221.8018486613;
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.16.0", v1::PREEMPT_MODE_LAZY, 400000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_thresholds()->set_hung_task_timeout_seconds(120);
  s.mutable_thresholds()->set_hung_task_panic(false);
  ModelOptions options;
  options.sites = 0;
  auto predict = [&] {
    return PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER,
                               options);
  };
  v1::AttachPrediction p = predict();
  EXPECT_NEAR(p.lock_seconds(), walk, 1e-6);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
  EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_REPORTED);
  const v1::ThresholdCheck* hung =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK);
  ASSERT_NE(hung, nullptr);
  EXPECT_DOUBLE_EQ(hung->threshold(), 120);
  EXPECT_NEAR(hung->predicted(), walk, 1e-6);
  EXPECT_NEAR(hung->margin(), 1.848349, 1e-6);
  EXPECT_TRUE(hung->applies());
  EXPECT_FALSE(hung->panics());

  s.mutable_thresholds()->set_hung_task_panic(true);
  p = predict();
  EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_PANIC);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
  hung = testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK);
  ASSERT_NE(hung, nullptr);
  EXPECT_TRUE(hung->panics());

  // Both sides of the boundary: a 221 s timeout is reached (margin
  // 221.8018 / 221 = 1.0036), a 222 s one is not (0.9991).
  s.mutable_thresholds()->set_hung_task_panic(false);
  s.mutable_thresholds()->set_hung_task_timeout_seconds(221);
  p = predict();
  EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_REPORTED);
  EXPECT_NEAR(
      testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK)->margin(),
      1.0036283, 1e-6);
  s.mutable_thresholds()->set_hung_task_timeout_seconds(222);
  p = predict();
  EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_NONE);
  EXPECT_NEAR(
      testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK)->margin(),
      0.9991074, 1e-6);

  // Timeout 0: the detector is off, no check.
  s.mutable_thresholds()->set_hung_task_timeout_seconds(0);
  p = predict();
  EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_OFF);
  EXPECT_EQ(testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK), nullptr);
  // Neither file read: unknown, no check, no risk claimed.
  s.mutable_thresholds()->clear_hung_task_timeout_seconds();
  s.mutable_thresholds()->clear_hung_task_panic();
  p = predict();
  EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_UNKNOWN);
  EXPECT_EQ(testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK), nullptr);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
}

// The hung-task check follows the time ftrace_lock is held under every
// preemption model: the static PREEMPT_NONE walk (58.7 ns per visit,
// 146.7955 s, 1.2233x) and the voluntary one (its stall stretch is one
// pass, its hold the whole walk). Patching counts too: 60,000 sites at the
// graph tracer's cost add to the hold. A kind that does not walk holds the
// lock only to patch: no hung-task answer.
TEST(FgraphAttachTest, HungTaskUnderEveryModelAndOnlyForWalks) {
  for (v1::PreemptMode mode :
       {v1::PREEMPT_MODE_NONE, v1::PREEMPT_MODE_VOLUNTARY}) {
    SCOPED_TRACE(mode);
    v1::HostSnapshot s = testing::FgraphAttachHost("6.16.0", mode, 400000);
    s.mutable_kernel()->set_preempt_dynamic(false);
    s.mutable_thresholds()->set_hung_task_timeout_seconds(120);
    ModelOptions options;
    options.sites = 0;
    v1::AttachPrediction p =
        PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
    EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_REPORTED);
    const v1::ThresholdCheck* hung =
        testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK);
    ASSERT_NE(hung, nullptr);
    EXPECT_NEAR(hung->predicted(), 146.7954737, 1e-6);
    EXPECT_NEAR(hung->margin(), 1.2232956, 1e-6);
  }
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.16.0", v1::PREEMPT_MODE_LAZY, 1000);
  s.mutable_thresholds()->set_hung_task_timeout_seconds(120);
  v1::AttachPrediction p = PredictFgraphAttach(
      s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, ModelOptions());
  const v1::ThresholdCheck* hung =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK);
  ASSERT_NE(hung, nullptr);
  EXPECT_GT(p.patch_seconds(), 0);
  EXPECT_DOUBLE_EQ(hung->predicted(), p.lock_seconds());
  EXPECT_DOUBLE_EQ(p.lock_seconds(), p.walk_seconds() + p.patch_seconds());
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FENTRY_FEXIT, ModelOptions());
  EXPECT_EQ(p.hung_task(), v1::HUNG_TASK_RISK_UNSPECIFIED);
  EXPECT_EQ(testing::FindCheck(p, v1::ThresholdCheck::KIND_HUNG_TASK), nullptr);
}

}  // namespace
}  // namespace tracehealth
