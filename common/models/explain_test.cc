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

TEST(ExplainTest, DropKeepsNumbersAndConfidenceAndShrinksTheReport) {
  const v1::Predictions full = EvaluateAll(KasanHost());
  v1::Predictions compact = full;
  DropExplanations(&compact);
  ASSERT_EQ(compact.attach_size(), full.attach_size());
  for (int i = 0; i < full.attach_size(); ++i) {
    const v1::AttachPrediction& a = compact.attach(i);
    EXPECT_FALSE(HasExplanation(a));
    EXPECT_EQ(a.latency_seconds(), full.attach(i).latency_seconds());
    EXPECT_EQ(a.passes(), full.attach(i).passes());
    EXPECT_EQ(a.risk(), full.attach(i).risk());
    EXPECT_EQ(a.checks_size(), full.attach(i).checks_size());
    EXPECT_EQ(a.basis().confidence(), full.attach(i).basis().confidence());
  }
  EXPECT_TRUE(compact.stack_depot().summary().empty());
  EXPECT_EQ(compact.stack_depot().basis().inputs_size(), 0);
  EXPECT_EQ(compact.stack_depot().budget_ratio(), full.stack_depot().budget_ratio());
  EXPECT_TRUE(compact.vmap_purge().summary().empty());
  EXPECT_EQ(compact.vmap_purge().purge_seconds(), full.vmap_purge().purge_seconds());
  // The explanations are most of the bytes.
  EXPECT_LT(compact.ByteSizeLong() * 3, full.ByteSizeLong())
      << compact.ByteSizeLong() << " vs " << full.ByteSizeLong();
}

TEST(ExplainTest, ExplainRestoresExactlyWhatWasDropped) {
  const v1::HostSnapshot s = KasanHost();
  const v1::Predictions full = EvaluateAll(s);
  v1::Predictions p = full;
  DropExplanations(&p);
  ExplainPredictions(s, {}, &p);
  EXPECT_EQ(p.SerializeAsString(), full.SerializeAsString());

  v1::AttachPrediction one = full.attach(4);
  v1::Predictions tmp;
  *tmp.add_attach() = one;
  DropExplanations(&tmp);
  ExplainAttach(s, {}, tmp.mutable_attach(0));
  EXPECT_EQ(tmp.attach(0).SerializeAsString(), one.SerializeAsString());
}

TEST(ExplainTest, NumbersAreNeverReplaced) {
  const v1::HostSnapshot s = KasanHost();
  v1::Predictions p = EvaluateAll(s);
  DropExplanations(&p);
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
