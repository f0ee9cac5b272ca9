#include "common/models/evaluate.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(EvaluateTest, OneAttachPredictionPerKindInOrder) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.18.2");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  s.mutable_threads()->set_total(240000);
  s.mutable_fgraph()->set_active(false);
  v1::Predictions p = EvaluateAll(s);
  ASSERT_EQ(p.attach_size(), 10);
  for (int i = 0; i < p.attach_size(); ++i) {
    EXPECT_EQ(p.attach(i).probe_kind(), i + 1);
    EXPECT_EQ(p.attach(i).SerializeAsString(),
              PredictAttach(s, p.attach(i).probe_kind()).SerializeAsString());
  }
  EXPECT_EQ(p.worst_risk(), v1::RISK_STALL);
}

TEST(EvaluateTest, Deterministic) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.19");
  s.mutable_threads()->set_total(5000);
  EXPECT_EQ(EvaluateAll(s).SerializeAsString(), EvaluateAll(s).SerializeAsString());
}

}  // namespace
}  // namespace tracehealth
