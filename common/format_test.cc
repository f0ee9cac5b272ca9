#include "common/format.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(FormatSecondsTest, PicksTheUnitAtEachBoundary) {
  EXPECT_EQ(FormatSeconds(79.864), "79.86 s");
  EXPECT_EQ(FormatSeconds(1.0), "1.00 s");
  EXPECT_EQ(FormatSeconds(0.999), "999.0 ms");
  EXPECT_EQ(FormatSeconds(0.0453), "45.3 ms");
  EXPECT_EQ(FormatSeconds(1e-3), "1.0 ms");
  EXPECT_EQ(FormatSeconds(0.000789), "789 us");
  EXPECT_EQ(FormatSeconds(1e-6), "1 us");
  EXPECT_EQ(FormatSeconds(12e-9), "12 ns");
  EXPECT_EQ(FormatSeconds(0), "0 ns");
  // By magnitude: a negative duration keeps its unit.
  EXPECT_EQ(FormatSeconds(-2.5), "-2.50 s");
  EXPECT_EQ(FormatSeconds(-0.002), "-2.0 ms");
}

TEST(FormatFixedTest, RoundsHalfAwayFromZero) {
  EXPECT_EQ(FormatFixed(12.345, 2), "12.35");
  EXPECT_EQ(FormatFixed(0.05, 1), "0.1");
  EXPECT_EQ(FormatFixed(-3.14159, 3), "-3.142");
  EXPECT_EQ(FormatFixed(120082.4, 0), "120082");
  EXPECT_EQ(FormatFixed(1.005, 1), "1.0");
  EXPECT_EQ(FormatFixed(0.07, 2), "0.07");
  EXPECT_EQ(FormatFixed(-0.001, 2), "0.00");
  EXPECT_EQ(FormatFixed(2e20, 1), "200000000000000000000.0");
}

TEST(FormatNumberTest, SixSignificantDigits) {
  EXPECT_EQ(FormatNumber(400000), "400000");
  EXPECT_EQ(FormatNumber(9e-8), "9e-08");
  EXPECT_EQ(FormatNumber(10), "10");
  EXPECT_EQ(FormatNumber(1234567), "1.23457e+06");
}

}  // namespace
}  // namespace tracehealth
