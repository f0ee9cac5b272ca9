#include "common/models/stackdepot/trie/generated_workload.h"

#include "common/models/stackdepot/trie/trace_generator.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// The build-time figures are exactly what the trie measures now.
TEST(GeneratedWorkloadTest, MatchesAFreshRunOfTheTrie) {
  const TrieComparison fresh = CompareTrieWithHash(GenerateSeedWorkload());
  const TrieComparison& baked = GeneratedWorkloadEstimate();
  EXPECT_EQ(baked.records, fresh.records);
  EXPECT_EQ(baked.hash_bytes, fresh.hash_bytes);
  EXPECT_EQ(baked.hash_pools, fresh.hash_pools);
  EXPECT_EQ(baked.trie_bytes, fresh.trie_bytes);
  EXPECT_EQ(baked.trie_pools, fresh.trie_pools);
  EXPECT_EQ(baked.insert_failures, fresh.insert_failures);
  EXPECT_DOUBLE_EQ(baked.ratio, fresh.ratio);
  EXPECT_EQ(baked.records, 32768u);
  EXPECT_GT(baked.ratio, 0.5);
  EXPECT_LT(baked.ratio, 0.7);
}

}  // namespace
}  // namespace tracehealth
