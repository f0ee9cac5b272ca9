#include "common/models/stackdepot/depot_pools.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// lib/stackdepot.c: DEPOT_POOL_ORDER 2, DEPOT_STACK_ALIGN 4,
// STACK_DEPOT_EXTRA_BITS 5, handles of 32 bits.
TEST(DepotPoolsTest, PoolSizeAndLimitByPageSize) {
  // 4 KiB pages: 2^(12+2) = 16 KiB; offset bits 2+12-4 = 10, index bits
  // 32-10-5 = 17: limit 2^17-1 = 131,071, default min(131071, 8192).
  EXPECT_EQ(DepotPoolBytes(4096), 16384u);
  EXPECT_EQ(DepotPoolLimit(4096), 131071u);
  EXPECT_EQ(DepotDefaultMaxPools(4096), 8192u);
  // 16 KiB pages: 64 KiB pools, 15 index bits: 32,767, default 8,192.
  EXPECT_EQ(DepotPoolBytes(16384), 65536u);
  EXPECT_EQ(DepotPoolLimit(16384), 32767u);
  EXPECT_EQ(DepotDefaultMaxPools(16384), 8192u);
  // 64 KiB pages: 256 KiB pools, offset bits 2+16-4 = 14, index bits 13:
  // limit and default 8,191 (8,191 x 256 KiB = 2 GiB less 256 KiB).
  EXPECT_EQ(DepotPoolBytes(65536), 262144u);
  EXPECT_EQ(DepotPoolLimit(65536), 8191u);
  EXPECT_EQ(DepotDefaultMaxPools(65536), 8191u);
  // An unknown or odd page size is taken as 4 KiB.
  EXPECT_EQ(DepotPoolBytes(0), 16384u);
  EXPECT_EQ(DepotPoolLimit(12345), 131071u);
}

TEST(DepotPoolsTest, ParsedLikeTheKernel) {
  // kstrtouint base 0: decimal, 0x hex, leading 0 octal.
  EXPECT_EQ(MaxPoolsFromCmdline("ro stack_depot_max_pools=16384", 131071),
            16384u);
  EXPECT_EQ(MaxPoolsFromCmdline("stack_depot_max_pools=0x4000", 131071),
            16384u);
  EXPECT_EQ(MaxPoolsFromCmdline("stack_depot_max_pools=040000", 131071),
            16384u);  // octal 40000 = 16384
  EXPECT_EQ(MaxPoolsFromCmdline("stack_depot_max_pools=+2048\n", 131071),
            2048u);
  // Both sides of the lower bound 1024.
  EXPECT_EQ(MaxPoolsFromCmdline("stack_depot_max_pools=1024", 131071), 1024u);
  EXPECT_FALSE(MaxPoolsFromCmdline("stack_depot_max_pools=1023", 131071));
  // Both sides of the limit: 131,071 with 4 KiB pages, 8,191 with 64 KiB.
  EXPECT_EQ(MaxPoolsFromCmdline("stack_depot_max_pools=131071", 131071),
            131071u);
  EXPECT_FALSE(MaxPoolsFromCmdline("stack_depot_max_pools=131072", 131071));
  EXPECT_EQ(MaxPoolsFromCmdline("stack_depot_max_pools=8191", 8191), 8191u);
  EXPECT_FALSE(MaxPoolsFromCmdline("stack_depot_max_pools=8192", 8191));
  // Malformed: not applied.
  EXPECT_FALSE(MaxPoolsFromCmdline("stack_depot_max_pools=lots", 131071));
  EXPECT_FALSE(MaxPoolsFromCmdline("stack_depot_max_pools=09", 131071));
  EXPECT_FALSE(MaxPoolsFromCmdline("stack_depot_max_pools=0x", 131071));
  EXPECT_FALSE(MaxPoolsFromCmdline("stack_depot_max_pools=", 131071));
  EXPECT_FALSE(
      MaxPoolsFromCmdline("stack_depot_max_pools=99999999999", 131071));
  EXPECT_FALSE(MaxPoolsFromCmdline("quiet", 131071));
}

TEST(DepotPoolsTest, ARefusedOccurrenceKeepsTheEarlierValidOne) {
  std::string refused;
  EXPECT_EQ(MaxPoolsFromCmdline("stack_depot_max_pools=4096 "
                                "stack_depot_max_pools=512 "
                                "stack_depot_max_pools=banana",
                                131071, &refused),
            4096u);
  EXPECT_EQ(refused,
            "stack_depot_max_pools=512: below 1024; "
            "stack_depot_max_pools=banana: not a number");
  // A later valid one wins.
  EXPECT_EQ(MaxPoolsFromCmdline(
                "stack_depot_max_pools=4096 stack_depot_max_pools=2048", 8191),
            2048u);
}

}  // namespace
}  // namespace tracehealth
