#include "agent/parsers/stackdepot.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(StackDepotStatsTest, ParsesAllCounters) {
  auto r = ParseStackDepotStats(
      "pools: 7900\n"
      "refcounted_allocations: 120\n"
      "refcounted_frees: 20\n"
      "refcounted_in_use: 100\n"
      "freelist_size: 3\n"
      "persistent_count: 480000\n"
      "persistent_bytes: 127800000\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pools, 7900u);
  EXPECT_EQ(r->refcounted_in_use, 100u);
  EXPECT_EQ(r->persistent_count, 480000u);
  EXPECT_EQ(r->persistent_bytes, 127800000u);
}

TEST(StackDepotStatsTest, OlderKernelHasFewerCounters) {
  auto r = ParseStackDepotStats(
      "pools: 12\nrefcounted_allocations: 5\nrefcounted_frees: 1\n"
      "refcounted_in_use: 4\nfreelist_size: 0\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->persistent_bytes.has_value());
}

TEST(StackDepotStatsTest, RejectsMalformed) {
  EXPECT_FALSE(ParseStackDepotStats("").ok());
  EXPECT_FALSE(ParseStackDepotStats("refcounted_frees: 1\n").ok());
  EXPECT_FALSE(ParseStackDepotStats("pools: many\n").ok());
  EXPECT_FALSE(ParseStackDepotStats("pools: -1\n").ok());
  EXPECT_FALSE(ParseStackDepotStats("pools 5\n").ok());
}

}  // namespace
}  // namespace tracehealth::agent
