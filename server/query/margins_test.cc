#include "server/query/margins.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

v1::ThresholdCheck* AddCheck(
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks,
    double margin, bool applies) {
  v1::ThresholdCheck* c = checks->Add();
  c->set_margin(margin);
  c->set_applies(applies);
  return c;
}

TEST(MarginsTest, WorstMarginIsTheLargestApplyingCheckOfAnyPrediction) {
  v1::Predictions p;
  EXPECT_FALSE(WorstMargin(p).has_value());
  AddCheck(p.add_attach()->mutable_checks(), 0.5, true);
  AddCheck(p.add_attach()->mutable_checks(), 9.0, false);  // moot: ignored
  EXPECT_EQ(WorstMargin(p), 0.5);
  AddCheck(p.mutable_stack_depot()->mutable_checks(), 0.75, true);
  EXPECT_EQ(WorstMargin(p), 0.75);
  AddCheck(p.mutable_vmap_purge()->mutable_checks(), 1.25, true);
  EXPECT_EQ(WorstMargin(p), 1.25);
}

v1::HostSummary Host(const std::string& id, std::optional<double> margin,
                     v1::Risk risk = v1::RISK_NONE) {
  v1::HostSummary h;
  h.set_host_id(id);
  if (margin) h.set_worst_margin(*margin);
  h.set_worst_risk(risk);
  return h;
}

TEST(MarginsTest, StripGroupsHostsByWorstMarginLargestFirst) {
  // 5 hosts into 2 cells: ceil(5/2) = 3 per cell, then 2.
  std::vector<v1::MarginCell> strip = MarginStrip(
      {Host("e", std::nullopt), Host("a", 0.5), Host("b", 2.0, v1::RISK_STALL),
       Host("c", 0.5), Host("d", 1.0, v1::RISK_WARNING)},
      2);
  ASSERT_EQ(strip.size(), 2u);
  // Order: b (2.0), d (1.0), a (0.5), c (0.5, after a by id), e (none).
  EXPECT_EQ(strip[0].first_host_id(), "b");
  EXPECT_EQ(strip[0].hosts(), 3u);
  EXPECT_EQ(strip[0].max_margin(), 2.0);
  EXPECT_EQ(strip[0].min_margin(), 0.5);
  EXPECT_EQ(strip[0].worst_risk(), v1::RISK_STALL);
  EXPECT_EQ(strip[1].first_host_id(), "c");
  EXPECT_EQ(strip[1].hosts(), 2u);
  EXPECT_EQ(strip[1].max_margin(), 0.5);
  EXPECT_EQ(strip[1].min_margin(), 0.5);
  EXPECT_EQ(strip[1].worst_risk(), v1::RISK_NONE);

  // More cells than hosts: one host a cell.
  EXPECT_EQ(MarginStrip({Host("a", 0.1), Host("b", std::nullopt)}, 10).size(),
            2u);
  std::vector<v1::MarginCell> none = MarginStrip({Host("z", std::nullopt)}, 10);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].has_max_margin());
  EXPECT_TRUE(MarginStrip({Host("a", 0.1)}, 0).empty());
  EXPECT_TRUE(MarginStrip({}, 10).empty());
}

}  // namespace
}  // namespace tracehealth::server
