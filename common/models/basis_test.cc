#include "common/models/basis.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(BasisTest, FieldsAreFilled) {
  v1::Basis b;
  AddConstant(&b, "c_visit", 9e-8, "s", "fit", v1::ANCHOR_FIT);
  AddNote(&b, "n");
  AddFeatureRow(&b, "row");
  ASSERT_EQ(b.constants_size(), 1);
  EXPECT_EQ(b.constants(0).unit(), "s");
  EXPECT_EQ(b.constants(0).origin(), "fit");
  EXPECT_EQ(b.constants(0).anchor(), v1::ANCHOR_FIT);
  EXPECT_EQ(b.notes(0), "n");
  EXPECT_EQ(b.feature_rows(0), "row");
}

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

TEST(BasisTest, ClearExplanationKeepsNumbersAndConfidence) {
  v1::AttachPrediction p;
  p.set_passes(5);
  p.set_summary("x");
  p.mutable_basis()->set_confidence(0.7);
  AddInput(p.mutable_basis(), "a", "1", v1::INPUT_SOURCE_MEASURED);
  AddConstant(p.mutable_basis(), "c", 1, "s", "o", v1::ANCHOR_ASSUMPTION);
  AddFeatureRow(p.mutable_basis(), "row");
  AddNote(p.mutable_basis(), "n");
  ClearExplanation(&p);
  EXPECT_EQ(p.passes(), 5u);
  EXPECT_TRUE(p.summary().empty());
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 0.7);
  EXPECT_EQ(p.basis().inputs_size(), 0);
  EXPECT_EQ(p.basis().constants_size(), 0);
  EXPECT_EQ(p.basis().feature_rows_size(), 0);
  EXPECT_EQ(p.basis().notes_size(), 0);
}

}  // namespace
}  // namespace tracehealth
