#include "common/models/basis.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(BasisTest, ConfidenceDropsPerAssumedInput) {
  v1::Basis b;
  AddInput(&b, "threads.total", "400000", v1::INPUT_SOURCE_MEASURED);
  AddInput(&b, "batch", "1024", v1::INPUT_SOURCE_OVERRIDDEN);
  SetConfidence(&b);
  EXPECT_DOUBLE_EQ(b.confidence(), 1.0);
  AddInput(&b, "watchdog_thresh", "10", v1::INPUT_SOURCE_DEFAULT);
  AddInput(&b, "rcu", "21", v1::INPUT_SOURCE_DEFAULT);
  SetConfidence(&b);
  EXPECT_DOUBLE_EQ(b.confidence(), 0.8);
  SetConfidence(&b, 1);
  EXPECT_DOUBLE_EQ(b.confidence(), 0.5);
  SetConfidence(&b, 10);
  EXPECT_DOUBLE_EQ(b.confidence(), 0.05);
}

TEST(BasisTest, FieldsAreFilled) {
  v1::Basis b;
  AddConstant(&b, "c_visit", 9e-8, "s", "seed 000");
  AddNote(&b, "n");
  AddFeatureRow(&b, "row");
  ASSERT_EQ(b.constants_size(), 1);
  EXPECT_EQ(b.constants(0).unit(), "s");
  EXPECT_EQ(b.constants(0).origin(), "seed 000");
  EXPECT_EQ(b.notes(0), "n");
  EXPECT_EQ(b.feature_rows(0), "row");
  EXPECT_EQ(FormatNumber(400000), "400000");
  EXPECT_EQ(FormatNumber(9e-8), "9e-08");
}

}  // namespace
}  // namespace tracehealth

namespace tracehealth {
namespace {

TEST(BasisTest, ResetKeepingBasisClearsEverything) {
  v1::AttachPrediction p;
  p.set_passes(5);
  p.set_summary("x");
  AddInput(p.mutable_basis(), "a", "1", v1::INPUT_SOURCE_MEASURED);
  p.add_checks()->set_threshold(20);
  ResetKeepingBasis(&p);
  EXPECT_EQ(p.passes(), 0u);
  EXPECT_TRUE(p.summary().empty());
  EXPECT_EQ(p.checks_size(), 0);
  EXPECT_TRUE(p.has_basis());
  EXPECT_EQ(p.basis().inputs_size(), 0);
  AddInput(p.mutable_basis(), "b", "2", v1::INPUT_SOURCE_DEFAULT);
  EXPECT_EQ(p.basis().inputs(0).name(), "b");
  EXPECT_EQ(p.basis().inputs(0).value(), "2");
}

}  // namespace
}  // namespace tracehealth
