#include "common/models/stackdepot/trie/pool_accounting.h"

#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(PoolAccountingTest, HashRecordSizes) {
  EXPECT_EQ(HashRecordBytes(32), 288u);
  EXPECT_EQ(HashRecordBytes(64), 544u);
  EXPECT_EQ(HashRecordBytes(1), 48u);  // 40 -> 48
  EXPECT_EQ(HashRecordBytes(29), 272u);
}

TEST(PoolAccountingTest, CarvesWithoutStraddling) {
  PoolAccounting pools;
  for (int i = 0; i < 56; ++i) pools.Allocate(288);  // 56 * 288 = 16128
  EXPECT_EQ(pools.pools(), 1u);
  pools.Allocate(288);  // 256 bytes left: does not fit, new pool
  EXPECT_EQ(pools.pools(), 2u);
  EXPECT_EQ(pools.live_bytes(), 57u * 288);
  EXPECT_EQ(pools.reserved_bytes(), 2u * 16384);
}

TEST(PoolAccountingTest, FreedBlocksAreReused) {
  PoolAccounting pools;
  pools.Allocate(100);  // 112
  pools.Free(100);
  EXPECT_EQ(pools.live_bytes(), 0u);
  std::vector<uint64_t> one = {112};
  EXPECT_EQ(pools.PoolsNeeded(one), 0);
  pools.Allocate(112);
  EXPECT_EQ(pools.live_bytes(), 112u);
  EXPECT_EQ(pools.pools(), 1u);
}

// A full pool takes a freed block's size again without a new pool:
// 128 * 128 = 16,384 fills the first pool exactly.
TEST(PoolAccountingTest, FreedBlockServesTheNextAllocationOfItsSize) {
  PoolAccounting pools;
  for (int i = 0; i < 128; ++i) pools.Allocate(128);
  EXPECT_EQ(pools.pools(), 1u);
  pools.Free(128);
  EXPECT_EQ(pools.live_bytes(), 127u * 128);
  pools.Allocate(128);  // the freed block
  EXPECT_EQ(pools.pools(), 1u);
  EXPECT_EQ(pools.live_bytes(), 128u * 128);
  pools.Allocate(128);  // none freed left: a second pool
  EXPECT_EQ(pools.pools(), 2u);
  // Another size does not take it: 112 after freeing 128 needs a carve.
  pools.Free(128);
  std::vector<uint64_t> other = {112};
  EXPECT_EQ(pools.PoolsNeeded(other), 0);  // 16,384 - 128 left in pool 2
  pools.Allocate(112);
  EXPECT_EQ(pools.live_bytes(), 128u * 128 + 112);
}

TEST(PoolAccountingTest, WholePoolLeavesCurrentPool) {
  PoolAccounting pools;
  pools.Allocate(1000);
  pools.Allocate(16384);
  EXPECT_EQ(pools.pools(), 2u);
  pools.Allocate(1000);  // still fits the first pool
  EXPECT_EQ(pools.pools(), 2u);
}

TEST(PoolAccountingTest, BudgetAndOversize) {
  PoolAccounting pools(16384, 1);
  std::vector<uint64_t> big = {16384};
  EXPECT_TRUE(pools.Fits(big));
  std::vector<uint64_t> two = {16384, 16};
  EXPECT_EQ(pools.PoolsNeeded(two), 2);
  EXPECT_FALSE(pools.Fits(two));
  std::vector<uint64_t> too_big = {16385};
  EXPECT_EQ(pools.PoolsNeeded(too_big), -1);
  EXPECT_FALSE(pools.Fits(too_big));
}

}  // namespace
}  // namespace tracehealth
