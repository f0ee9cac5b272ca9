#include "common/models/explain.h"

#include "common/models/evaluate.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::HostSnapshot KasanHost() {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.12.5");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  s.mutable_kernel()->set_config_kasan(true);
  s.mutable_kernel()->set_config_kasan_vmalloc(true);
  s.mutable_kernel()->set_config_stackdepot(true);
  s.mutable_threads()->set_total(240000);
  s.mutable_fgraph()->set_active(false);
  s.mutable_cpus()->set_online(256);
  s.mutable_vmalloc()->set_unpurged_shadow_page_areas(2804);
  s.mutable_stackdepot()->set_pools(4096);
  return s;
}

TEST(ExplainTest, PredictionsWithoutProseAreAFractionOfTheBytes) {
  const v1::Predictions numbers = PredictAll(KasanHost());
  const v1::Predictions full = EvaluateAll(KasanHost());
  for (const v1::AttachPrediction& a : numbers.attach())
    EXPECT_FALSE(HasExplanation(a));
  for (const v1::AttachPrediction& a : full.attach())
    EXPECT_TRUE(HasExplanation(a));
  // The explanations are most of the bytes.
  EXPECT_LT(numbers.ByteSizeLong() * 3, full.ByteSizeLong())
      << numbers.ByteSizeLong() << " vs " << full.ByteSizeLong();
}

TEST(ExplainTest, ExplainingPredictionsGivesWhatEvaluateAllGives) {
  const v1::HostSnapshot s = KasanHost();
  const v1::Predictions full = EvaluateAll(s);
  v1::Predictions p = PredictAll(s);
  ExplainPredictions(s, {}, &p);
  EXPECT_EQ(p.SerializeAsString(), full.SerializeAsString());

  v1::AttachPrediction one =
      PredictAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  ExplainAttach(s, {}, &one);
  EXPECT_EQ(one.SerializeAsString(), full.attach(4).SerializeAsString());
}

TEST(ExplainTest, NumbersAreNeverReplaced) {
  const v1::HostSnapshot s = KasanHost();
  v1::Predictions p = PredictAll(s);
  // What an agent with another calibration predicted stays as it was.
  p.mutable_attach(0)->set_latency_seconds(1234.5);
  p.mutable_vmap_purge()->set_purge_seconds(9.5);
  ExplainPredictions(s, {}, &p);
  EXPECT_EQ(p.attach(0).latency_seconds(), 1234.5);
  EXPECT_EQ(p.vmap_purge().purge_seconds(), 9.5);
  EXPECT_FALSE(p.attach(0).summary().empty());
  EXPECT_GT(p.attach(0).basis().inputs_size(), 0);
}

TEST(ExplainTest, AnExplainedPredictionIsLeftAlone) {
  const v1::HostSnapshot s = KasanHost();
  v1::Predictions p = EvaluateAll(s);
  p.mutable_attach(0)->set_summary("from the agent");
  v1::Predictions before = p;
  ExplainPredictions(s, {}, &p);
  EXPECT_EQ(p.SerializeAsString(), before.SerializeAsString());
}

TEST(ExplainTest, EmptyPredictionsStayEmpty) {
  v1::Predictions p;
  ExplainPredictions(v1::HostSnapshot(), {}, &p);
  EXPECT_EQ(p.attach_size(), 0);
  EXPECT_FALSE(p.has_stack_depot());
  EXPECT_FALSE(p.has_vmap_purge());
}

}  // namespace
}  // namespace tracehealth
