#include "server/query/margins.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

MarginHost Host(const std::string& id, std::optional<double> margin,
                v1::Risk risk = v1::RISK_NONE) {
  return {id, margin, risk};
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
