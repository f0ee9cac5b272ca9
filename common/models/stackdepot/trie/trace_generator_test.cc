#include "common/models/stackdepot/trie/trace_generator.h"

#include <map>
#include <set>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(TraceGeneratorTest, SeedShape) {
  WorkloadOptions options;
  options.shuffle = false;
  const auto traces = GenerateSeedWorkload(options);
  ASSERT_EQ(traces.size(), 32768u);
  std::set<std::vector<uint64_t>> distinct(traces.begin(), traces.end());
  EXPECT_EQ(distinct.size(), traces.size());
  // Fraction of frames that are copies of an earlier stack of the group.
  uint64_t shared = 0;
  for (size_t g = 0; g < traces.size(); g += 64) {
    std::set<std::pair<size_t, uint64_t>> seen;
    for (size_t i = g; i < g + 64; ++i) {
      ASSERT_EQ(traces[i].size(), 32u);
      for (size_t f = 0; f < 32; ++f) {
        EXPECT_EQ(traces[i][f] >> 32, 0xffffffffull);
        if (!seen.insert({f, traces[i][f]}).second) ++shared;
      }
    }
  }
  const double fraction = static_cast<double>(shared) / (32768.0 * 32);
  EXPECT_NEAR(fraction, 0.75 * 63 / 64, 0.01);
}

TEST(TraceGeneratorTest, FlatShape) {
  WorkloadOptions options;
  options.shape = WorkloadShape::kFlat;
  options.shuffle = false;
  options.stacks = 128;
  const auto traces = GenerateSeedWorkload(options);
  for (size_t i = 1; i < 64; ++i) {
    EXPECT_TRUE(std::equal(traces[0].begin(), traces[0].begin() + 24,
                           traces[i].begin()));
    EXPECT_NE(traces[0][24], traces[i][24]);
  }
  EXPECT_NE(traces[0][0], traces[64][0]);
}

TEST(TraceGeneratorTest, DeterministicAndShuffled) {
  const auto a = GenerateSeedWorkload();
  const auto b = GenerateSeedWorkload();
  EXPECT_EQ(a, b);
  WorkloadOptions other;
  other.seed = 4;
  EXPECT_NE(a, GenerateSeedWorkload(other));
  WorkloadOptions unshuffled;
  unshuffled.shuffle = false;
  const auto c = GenerateSeedWorkload(unshuffled);
  EXPECT_NE(a, c);
  std::multiset<std::vector<uint64_t>> sa(a.begin(), a.end()),
      sc(c.begin(), c.end());
  EXPECT_EQ(sa, sc);
}

TEST(TraceGeneratorTest, NotCompressible) {
  WorkloadOptions options;
  options.compressible = false;
  options.stacks = 64;
  for (const auto& t : GenerateSeedWorkload(options)) {
    for (uint64_t f : t) EXPECT_NE(f >> 32, 0xffffffffull);
  }
}

}  // namespace
}  // namespace tracehealth
