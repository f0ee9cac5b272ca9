#include "common/models/fgraph/fgraph_walk.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// kernel/trace/fgraph.c alloc_retstack_tasklist(): a pass hands out B
// stacks in for_each_process_thread() order and returns -EAGAIN at the
// next thread once they are gone; start_graph_tracing() repeats it.
constexpr WalkConstants kC{88.7e-9, 2e-6, 20e-9};

TEST(FgraphWalkTest, AllNullIsTheSameAtHeadAndTail) {
  for (NullPlacement at : {NullPlacement::kHead, NullPlacement::kTail}) {
    // 100 threads, all NULL, B = 32: passes stop after 33, 65, 97 visits,
    // the fourth walks all 100.
    WalkCost w = ShadowStackWalk(100, 100, 32, at);
    EXPECT_EQ(w.passes, 4u);
    EXPECT_DOUBLE_EQ(w.visits, (33 + 65 + 97) + 100);
    // 64 of 64: the second pass hands out the last stack at the last
    // thread and ends there.
    w = ShadowStackWalk(64, 64, 32, at);
    EXPECT_EQ(w.passes, 2u);
    EXPECT_DOUBLE_EQ(w.visits, 33 + 64);
    // No NULL thread: one pass over the whole list.
    w = ShadowStackWalk(500, 0, 32, at);
    EXPECT_EQ(w.passes, 1u);
    EXPECT_DOUBLE_EQ(w.visits, 500);
  }
}

TEST(FgraphWalkTest, HeadIsTheBestCaseTailTheWorst) {
  // 400 threads, 100 NULL, B = 32: F = ceil(100/32) = 4, k = 3 early passes.
  // Head: 33 + 65 + 97 + 400 = 595.
  WalkCost head = ShadowStackWalk(400, 100, 32, NullPlacement::kHead);
  EXPECT_EQ(head.passes, 4u);
  EXPECT_DOUBLE_EQ(head.visits, 595);
  // Tail: each early pass walks past the 300 served threads first:
  // 3 * (300 + 1) + 32 * 3 * 4 / 2 + 400 = 903 + 192 + 400 = 1495.
  WalkCost tail = ShadowStackWalk(400, 100, 32, NullPlacement::kTail);
  EXPECT_EQ(tail.passes, 4u);
  EXPECT_DOUBLE_EQ(tail.visits, 1495);
}

TEST(FgraphWalkTest, EmptyPassOnlyWhenServedThreadsFollow) {
  // 64 NULL of 400 at the head: the second pass hands out its 32nd stack at
  // position 64 and finds thread 65 (-EAGAIN): a third, empty pass.
  // 33 + 65 + 400 = 498.
  WalkCost head = ShadowStackWalk(400, 64, 32, NullPlacement::kHead);
  EXPECT_EQ(head.passes, 3u);
  EXPECT_DOUBLE_EQ(head.visits, 498);
  // At the tail the last NULL thread is the last thread: no third pass.
  // 1 * (336 + 1) + 32 + 400 = 769.
  WalkCost tail = ShadowStackWalk(400, 64, 32, NullPlacement::kTail);
  EXPECT_EQ(tail.passes, 2u);
  EXPECT_DOUBLE_EQ(tail.visits, 769);
  // 65 NULL: F = 3 both ways, no empty pass at the head.
  EXPECT_EQ(ShadowStackWalk(400, 65, 32, NullPlacement::kHead).passes, 3u);
}

TEST(FgraphWalkTest, ForkDeltaRangeAt400kThreads) {
  // 400,000 threads, 40,000 NULL (a multiple of 32): F = 1250.
  // Head: served threads follow, so 1250 early passes and an empty one:
  //   32 * 1250 * 1251 / 2 + 1250 + 400,000 = 25,421,250
  //   (~ N_null^2 / 2B + N_total = 25.4 M).
  WalkCost head = ShadowStackWalk(400000, 40000, 32, NullPlacement::kHead);
  EXPECT_EQ(head.passes, 1251u);
  EXPECT_DOUBLE_EQ(head.visits, 25421250);
  // Tail: k = 1249, no empty pass:
  //   1249 * 360,001 + 24,980,000 + 400,000 = 475,021,249
  //       (~ N_null * N_total / B - N_null^2 / 2B = 475 M).
  WalkCost tail = ShadowStackWalk(400000, 40000, 32, NullPlacement::kTail);
  EXPECT_EQ(tail.passes, 1250u);
  EXPECT_DOUBLE_EQ(tail.visits, 475021249);
  // At 88.7 ns a visit, 2 us a pass, 20 ns a stack: 2.26 s ... 42.1 s.
  // 88.7e-9 * 25,421,250 + 2e-6 * 1251 + 20e-9 * 40,000 = 2.2582.
  EXPECT_NEAR(WalkSeconds(head, 40000, kC), 2.2582, 1e-3);
  // 88.7e-9 * 475,021,249 + 2e-6 * 1250 + 20e-9 * 40,000 = 42.1377.
  EXPECT_NEAR(WalkSeconds(tail, 40000, kC), 42.1377, 1e-3);
  // All 400,000 NULL: N^2 / (2B) within 0.1 %.
  WalkCost all = ShadowStackWalk(400000, 400000, 32, NullPlacement::kTail);
  EXPECT_NEAR(all.visits / (400000.0 * 400000 / 64), 1.0, 0.001);
}

TEST(FgraphWalkTest, InverseSolvesTheQuadratic) {
  for (double seconds : {0.5, 20.0, 21.0, 300.0}) {
    for (uint32_t batch : {32u, 1024u}) {
      double n = ThreadsForWalkSeconds(seconds, batch, kC);
      EXPECT_NEAR(WalkSecondsAllNull(n, batch, kC) / seconds, 1.0, 1e-9);
    }
  }
  // 20 s at B = 32: 120,082 threads (about sqrt(20 * 64 / c_visit)).
  EXPECT_NEAR(ThreadsForWalkSeconds(20, 32, kC), 120081.95, 0.1);
  EXPECT_EQ(ThreadsForWalkSeconds(0, 32, kC), 0);
}

TEST(FgraphWalkTest, NullThreadsInverseAtAFixedThreadCount) {
  // 400,000 threads, 20 s: c_visit * (x * 12,500 - x^2/64 + x/2 + 400,000)
  // + c_pass * x / 32 + c_alloc * x = 20 at x = 18,428.7.
  std::optional<double> x = NullThreadsForWalkSeconds(20, 400000, 32, kC);
  ASSERT_TRUE(x.has_value());
  EXPECT_NEAR(*x, 18428.75, 0.1);
  // The exact tail walk with 18,429 NULL threads takes 19.97 s.
  WalkCost w = ShadowStackWalk(400000, 18429, 32, NullPlacement::kTail);
  EXPECT_NEAR(WalkSeconds(w, 18429, kC), 20.0, 0.05);
  // Far fewer than the 120,082 an all-NULL host of that size needs.
  EXPECT_LT(*x, ThreadsForWalkSeconds(20, 32, kC));
  // One pass over 300 M threads already takes 26.6 s: 0 NULL threads.
  EXPECT_EQ(NullThreadsForWalkSeconds(20, 300000000, 32, kC), 0.0);
  // 10,000 threads cannot take 20 s whatever N_null (at most ~0.2 s).
  EXPECT_FALSE(NullThreadsForWalkSeconds(20, 10000, 32, kC).has_value());
}

}  // namespace
}  // namespace tracehealth
