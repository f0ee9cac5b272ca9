#include "common/models/fgraph/fgraph_walk.h"

#include <cmath>
#include <optional>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// kernel/trace/fgraph.c alloc_retstack_tasklist(): a pass hands out B
// stacks in for_each_process_thread() order and returns -EAGAIN at the
// next thread once they are gone; start_graph_tracing() repeats it.
const WalkConstants kC{88.7e-9, 2e-6, 20e-9, {}};

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

namespace tracehealth {
namespace {

// Visit levels: each pass's visits at the factor of its size.
TEST(FgraphWalkLevelsTest, EachPassAtItsSizesFactor) {
  // Passes of 33, 65, 97 and 100 visits (100 threads, all NULL, B = 32).
  WalkCost w = ShadowStackWalk(100, 100, 32, NullPlacement::kTail, {{60, 2}});
  EXPECT_DOUBLE_EQ(w.visits, 295);
  EXPECT_DOUBLE_EQ(w.weighted_visits, 33 + 2 * (65 + 97 + 100));
  // A level starts at its from_tasks: 65 is in the second, 66 is not.
  w = ShadowStackWalk(100, 100, 32, NullPlacement::kTail, {{65, 3}, {98, 0.5}});
  EXPECT_DOUBLE_EQ(w.weighted_visits, 33 + 3 * (65 + 97) + 0.5 * 100);
  w = ShadowStackWalk(100, 100, 32, NullPlacement::kHead, {{66, 3}, {98, 0.5}});
  EXPECT_DOUBLE_EQ(w.weighted_visits, 33 + 65 + 3 * 97 + 0.5 * 100);
  // Tail with served threads: 200 threads, the last 64 NULL. The first
  // pass walks the 136 served, 32 NULL and one more (169); the last 200.
  w = ShadowStackWalk(200, 64, 32, NullPlacement::kTail, {{170, 2}});
  EXPECT_DOUBLE_EQ(w.visits, 169 + 200);
  EXPECT_DOUBLE_EQ(w.weighted_visits, 169 + 2 * 200);
  w = ShadowStackWalk(200, 64, 32, NullPlacement::kTail, {{169, 2}});
  EXPECT_DOUBLE_EQ(w.weighted_visits, 2 * (169 + 200));
  // No NULL thread: one pass at its factor.
  w = ShadowStackWalk(500, 0, 32, NullPlacement::kTail, {{400, 1.5}});
  EXPECT_DOUBLE_EQ(w.weighted_visits, 750);
  // Without levels the weighted visits are the visits.
  w = ShadowStackWalk(100, 100, 32, NullPlacement::kTail);
  EXPECT_DOUBLE_EQ(w.weighted_visits, w.visits);
}

TEST(FgraphWalkLevelsTest, ManyPassesMatchTheirSum) {
  // 5,000 threads, B = 32: the closed form per level against the sum.
  const std::vector<VisitLevel> levels = {{1000, 1.5}, {3000, 2.25}};
  const WalkCost w =
      ShadowStackWalk(5000, 5000, 32, NullPlacement::kTail, levels);
  double sum = 0;
  for (double v = 33; v < 5000; v += 32) sum += VisitFactor(levels, v) * v;
  sum += VisitFactor(levels, 5000) * 5000;
  EXPECT_NEAR(w.weighted_visits, sum, 1e-9 * sum);
  EXPECT_EQ(VisitFactor(levels, 999), 1);
  EXPECT_EQ(VisitFactor(levels, 1000), 1.5);
  EXPECT_EQ(VisitFactor(levels, 2999.5), 1.5);
  EXPECT_EQ(VisitFactor(levels, 1e9), 2.25);
  EXPECT_EQ(VisitFactor({}, 1e9), 1);
}

TEST(FgraphWalkLevelsTest, SecondsAndTheirInverses) {
  const WalkConstants c{100e-9, 2e-6, 20e-9, {{1000, 1.5}, {3000, 2.25}}};
  const WalkCost w =
      ShadowStackWalk(5000, 5000, 32, NullPlacement::kTail, c.levels);
  const double s = WalkSeconds(w, 5000, c);
  EXPECT_DOUBLE_EQ(s, 100e-9 * w.weighted_visits + 2e-6 * 157 + 20e-9 * 5000);
  EXPECT_DOUBLE_EQ(WalkSecondsAllNull(5000, 32, c), s);
  // The smallest whole count whose walk takes s: 5,000 itself.
  EXPECT_EQ(ThreadsForWalkSeconds(s, 32, c), 5000);
  EXPECT_EQ(ThreadsForWalkSeconds(std::nextafter(s, 0), 32, c), 5000);
  EXPECT_EQ(ThreadsForWalkSeconds(0, 32, c), 0);
  // At 10,000 threads, the 4,000 at the tail whose walk takes t.
  const double t = WalkSeconds(
      ShadowStackWalk(10000, 4000, 32, NullPlacement::kTail, c.levels), 4000,
      c);
  // Within one batch: the walk is not monotone there (one more NULL thread
  // at the tail is one fewer served thread before it in every early pass),
  // and 3,969 already takes t.
  const std::optional<double> x = NullThreadsForWalkSeconds(t, 10000, 32, c);
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(*x, 3969);
  const uint64_t n = static_cast<uint64_t>(*x);
  EXPECT_GE(
      WalkSeconds(ShadowStackWalk(10000, n, 32, NullPlacement::kTail, c.levels),
                  n, c),
      t);
  // Less than one full pass: none; more than all 10,000: no answer.
  EXPECT_EQ(NullThreadsForWalkSeconds(1e-6, 10000, 32, c), 0);
  EXPECT_EQ(NullThreadsForWalkSeconds(1e6, 10000, 32, c), std::nullopt);
}

}  // namespace
}  // namespace tracehealth
