#include "agent/parsers/stackdepot.h"

#include <optional>
#include <string>
#include <utility>

#include "common/testing/refusal.h"
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
  const std::pair<const char*, const char*> cases[] = {
      {"", "stackdepot stats: no 'pools:' line"},
      {"refcounted_frees: 1\n", "stackdepot stats: no 'pools:' line"},
      {"pools: many\n", "stackdepot stats: malformed line 'pools: many'"},
      {"pools: -1\n", "stackdepot stats: negative value in 'pools: -1'"},
      {"pools 5\n", "stackdepot stats: malformed line 'pools 5'"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseStackDepotStats(text).status(), message);
  }
}

// Lines are trimmed, 0 is a value, unknown keys are skipped and the last
// "pools:" line wins.
TEST(StackDepotStatsTest, TrimmingZeroAndLastLineWins) {
  absl::StatusOr<StackDepotCounters> c = ParseStackDepotStats(
      "  pools: 7 \n\tpersistent_count:0\nnew_counter: 9\npools: 8\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->pools, 8u);
  EXPECT_EQ(c->persistent_count, 0u);
}

}  // namespace
}  // namespace tracehealth::agent
