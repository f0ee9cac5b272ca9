#include "agent/calibrate/memory_walk.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

MemoryWalkOptions Small() {
  MemoryWalkOptions o;
  o.min_tasks = 1024;
  o.max_tasks = 5000;
  o.stride = 4096;
  o.min_visits = 10000;
  o.repeats = 1;
  return o;
}

TEST(MemoryWalkTest, DoublesFromTheSmallestThenTheLargest) {
  absl::StatusOr<std::vector<v1::MemoryWalkPoint>> w = WalkMemory(Small());
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 4u);
  EXPECT_EQ((*w)[0].tasks(), 1024u);
  EXPECT_EQ((*w)[1].tasks(), 2048u);
  EXPECT_EQ((*w)[2].tasks(), 4096u);
  EXPECT_EQ((*w)[3].tasks(), 5000u);
  for (const v1::MemoryWalkPoint& p : *w) {
    EXPECT_GT(p.ns_per_task(), 0) << p.tasks();
    // A dependent load takes well under 100 us.
    EXPECT_LT(p.ns_per_task(), 1e5) << p.tasks();
  }
}

// Several sweeps over sizes that are not powers of two and visit counts
// that are not whole passes: every size still walks exactly its own prefix
// of the mapping (WalkMemory checks each timing went round its nodes).
TEST(MemoryWalkTest, SweepsWalkEachPrefixAsARing) {
  MemoryWalkOptions o = Small();
  o.min_tasks = 1000;
  o.max_tasks = 4500;
  o.min_visits = 3333;
  o.repeats = 3;
  absl::StatusOr<std::vector<v1::MemoryWalkPoint>> w = WalkMemory(o);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 4u);
  EXPECT_EQ((*w)[0].tasks(), 1000u);
  EXPECT_EQ((*w)[1].tasks(), 2000u);
  EXPECT_EQ((*w)[2].tasks(), 4000u);
  EXPECT_EQ((*w)[3].tasks(), 4500u);
  for (const v1::MemoryWalkPoint& p : *w) EXPECT_GT(p.ns_per_task(), 0);
}

TEST(MemoryWalkTest, TheLargestIsCappedByTheBytes) {
  MemoryWalkOptions o = Small();
  o.max_bytes = 3000 * 4096 + 4095;  // 3,000 tasks at most
  absl::StatusOr<std::vector<v1::MemoryWalkPoint>> w = WalkMemory(o);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 3u);
  EXPECT_EQ((*w)[2].tasks(), 3000u);
  // A power of two at the cap is walked once.
  o.max_bytes = 2048 * 4096;
  w = WalkMemory(o);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[1].tasks(), 2048u);
}

TEST(MemoryWalkTest, RefusesWhatItCannotLayOut) {
  MemoryWalkOptions o = Small();
  o.stride = 1984;  // below 2,048
  EXPECT_EQ(WalkMemory(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.stride = 4100;  // not a multiple of 64
  EXPECT_EQ(WalkMemory(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = Small();
  o.max_bytes = 1023 * 4096;  // not even the smallest size fits
  absl::Status s = WalkMemory(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no size from 1024 to 1023 tasks"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace tracehealth::agent
