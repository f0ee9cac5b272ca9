#include "server/calibration/median.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(MedianTest, OddAndEven) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3}), 3);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  // (2 + 3) / 2.
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace tracehealth::server
