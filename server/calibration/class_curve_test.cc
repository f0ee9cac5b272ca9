#include "server/calibration/class_curve.h"

#include <cmath>

#include "common/models/fgraph/fgraph_walk.h"
#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

// Every thread without a stack, batch 2: pass i (1-based) of N threads
// visits 1 + 2i tasks until the last, which visits N. At 8 threads: 3, 5,
// 7, 8 (23 visits); at 16: 3, 5, ..., 15, 16 (79); at 32: 3, 5, ..., 31, 32
// (287).
CanaryWalk Point(uint64_t threads, double ns) {
  CanaryWalk w;
  w.total_threads = threads;
  w.fresh_threads = threads;
  w.batch = 2;
  w.seconds_per_visit = ns * 1e-9;
  return w;
}

// What `curve` prices the walk of `w` at.
double Priced(const ClassCurve& curve, const CanaryWalk& w) {
  return curve.c_visit_seconds *
         ShadowStackWalk(w.total_threads, w.fresh_threads, w.batch,
                         NullPlacement::kTail, curve.levels)
             .weighted_visits;
}

TEST(ClassCurveTest, NoPointsNoCurve) {
  EXPECT_EQ(FitClassCurve({}).points, 0);
  // A price that is not positive is no point.
  ClassCurve c = FitClassCurve({Point(16, 0), Point(32, -5)});
  EXPECT_EQ(c.points, 0);
  EXPECT_EQ(c.c_visit_seconds, 0);
}

TEST(ClassCurveTest, OnePointIsOnePrice) {
  ClassCurve c = FitClassCurve({Point(16, 100)});
  EXPECT_EQ(c.points, 1);
  EXPECT_DOUBLE_EQ(c.c_visit_seconds, 100e-9);
  EXPECT_TRUE(c.levels.empty());
  EXPECT_EQ(c.min_threads, 16u);
  EXPECT_EQ(c.max_threads, 16u);
}

// 100 ns a visit at 8 threads, 150 at 16. The level starts at sqrt(8 * 16)
// = 11.31 tasks: of the 16-thread walk's 79 visits, the passes of 13, 15
// and 16 tasks (44 visits) are above it, those of 3..11 (35) below. For
// 1.5 x 79 = 118.5 weighted visits: 35 + 44 f = 118.5, f = 83.5 / 44 =
// 1.8977... The 8-thread walk (passes up to 8 tasks) keeps 100 ns.
TEST(ClassCurveTest, TwoPointsHandWorked) {
  ClassCurve c = FitClassCurve({Point(16, 150), Point(8, 100)});
  EXPECT_EQ(c.points, 2);
  EXPECT_DOUBLE_EQ(c.c_visit_seconds, 100e-9);
  ASSERT_EQ(c.levels.size(), 1u);
  EXPECT_DOUBLE_EQ(c.levels[0].from_tasks, std::sqrt(128.0));
  EXPECT_NEAR(c.levels[0].factor, 83.5 / 44, 1e-12);
  EXPECT_NEAR(Priced(c, Point(8, 0)), 100e-9 * 23, 1e-18);
  EXPECT_NEAR(Priced(c, Point(16, 0)), 150e-9 * 79, 1e-18);
  EXPECT_EQ(c.min_threads, 8u);
  EXPECT_EQ(c.max_threads, 16u);
}

// A third point, 200 ns at 32 threads: its second level starts at
// sqrt(16 * 32) = 22.63. Of its 287 visits, passes 3..11 (35) cost 1,
// passes 13..21 (85) f1, passes 23..31 and 32 (167) f2:
//   35 + 85 f1 + 167 f2 = 2 x 287 = 574.
TEST(ClassCurveTest, ThreePointsHandWorked) {
  ClassCurve c = FitClassCurve({Point(8, 100), Point(32, 200), Point(16, 150)});
  EXPECT_EQ(c.points, 3);
  ASSERT_EQ(c.levels.size(), 2u);
  const double f1 = 83.5 / 44;
  EXPECT_NEAR(c.levels[0].factor, f1, 1e-12);
  EXPECT_DOUBLE_EQ(c.levels[1].from_tasks, std::sqrt(512.0));
  EXPECT_NEAR(c.levels[1].factor, (574 - 35 - 85 * f1) / 167, 1e-12);
  // Every point's walk is priced as it was measured; at 64 threads (beyond
  // the last point) the last factor holds: passes 3..11 at 1, 13..21 at f1,
  // 23..63 and 64 at f2: 35 + 85 f1 + (21 x 43 + 64) f2.
  EXPECT_NEAR(Priced(c, Point(8, 0)), 100e-9 * 23, 1e-18);
  EXPECT_NEAR(Priced(c, Point(16, 0)), 150e-9 * 79, 1e-18);
  EXPECT_NEAR(Priced(c, Point(32, 0)), 200e-9 * 287, 1e-18);
  EXPECT_NEAR(Priced(c, Point(64, 0)),
              100e-9 * (35 + 85 * f1 + (21 * 43 + 64) * c.levels[1].factor),
              1e-17);
}

// Canaries within 1.25x of the smallest of their run are one point: at 16,
// 18 and 20 threads (20 = 1.25 x 16) the median, 120 ns, at the walk of
// 20; one at 21 threads starts the next point.
TEST(ClassCurveTest, CloseThreadCountsAreOnePoint) {
  ClassCurve c =
      FitClassCurve({Point(16, 100), Point(18, 140), Point(20, 120)});
  EXPECT_EQ(c.points, 1);
  EXPECT_DOUBLE_EQ(c.c_visit_seconds, 120e-9);
  EXPECT_TRUE(c.levels.empty());
  EXPECT_EQ(c.min_threads, 20u);
  EXPECT_EQ(c.max_threads, 20u);

  c = FitClassCurve(
      {Point(16, 100), Point(18, 140), Point(20, 120), Point(21, 240)});
  EXPECT_EQ(c.points, 2);
  EXPECT_DOUBLE_EQ(c.c_visit_seconds, 120e-9);
  ASSERT_EQ(c.levels.size(), 1u);
  EXPECT_DOUBLE_EQ(c.levels[0].from_tasks, std::sqrt(20.0 * 21.0));
  // 20 threads: passes 3, 5, ..., 19 and 20 (119 visits); 21: 3, ..., 21
  // and 21 (141).
  EXPECT_NEAR(Priced(c, Point(21, 0)), 240e-9 * 141, 1e-17);
  EXPECT_NEAR(Priced(c, Point(20, 0)), 120e-9 * 119, 1e-17);
}

// A bigger walk measured cheaper is no level: the price never falls.
TEST(ClassCurveTest, ABiggerWalkMeasuredCheaperIsNoLevel) {
  ClassCurve c = FitClassCurve({Point(8, 100), Point(16, 90)});
  EXPECT_EQ(c.points, 2);
  EXPECT_DOUBLE_EQ(c.c_visit_seconds, 100e-9);
  EXPECT_TRUE(c.levels.empty());
  // Equal is no level either.
  EXPECT_TRUE(FitClassCurve({Point(8, 100), Point(16, 100)}).levels.empty());
  // The next dearer point still gets its level, from the last point.
  c = FitClassCurve({Point(8, 100), Point(16, 90), Point(32, 200)});
  ASSERT_EQ(c.levels.size(), 1u);
  EXPECT_DOUBLE_EQ(c.levels[0].from_tasks, std::sqrt(512.0));
  EXPECT_NEAR(Priced(c, Point(32, 0)), 200e-9 * 287, 1e-17);
}

v1::Calibration Canary(uint64_t total, uint64_t fresh, uint32_t batch,
                       double c_visit) {
  v1::Calibration c;
  c.set_total_threads(total);
  c.set_fresh_threads(fresh);
  c.set_batch(batch);
  c.set_c_visit_seconds(c_visit);
  return c;
}

TEST(ClassCurveTest, ACanarysPointIsItsLargestWalk) {
  std::optional<CanaryWalk> w = CanaryWalkOf(Canary(16, 16, 2, 100e-9));
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->total_threads, 16u);
  EXPECT_EQ(w->fresh_threads, 16u);
  EXPECT_EQ(w->batch, 2u);
  EXPECT_DOUBLE_EQ(w->seconds_per_visit, 100e-9);  // one price
  // Its own user-space walk: 10 ns at 4 tasks, 20 at 16, one level from
  // sqrt(4 * 16) = 8 tasks at factor 2. Passes 3, 5, 7 (15 visits) at 1,
  // 9..15 and 16 (64) at 2: 143 weighted of 79 visits.
  v1::Calibration c = Canary(16, 16, 2, 100e-9);
  auto* p = c.add_memory_walk();
  p->set_tasks(4);
  p->set_ns_per_task(10);
  p = c.add_memory_walk();
  p->set_tasks(16);
  p->set_ns_per_task(20);
  w = CanaryWalkOf(c);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->seconds_per_visit, 100e-9 * 143 / 79, 1e-20);
  // A host with served threads: 20 on the host, 4 fresh at the tail, batch
  // 2: one early pass of 16 + 1 + 2 = 19 tasks, then 20: 39 visits, all at
  // factor 2.
  c.set_total_threads(20);
  c.set_fresh_threads(4);
  w = CanaryWalkOf(c);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->seconds_per_visit, 200e-9, 1e-20);
}

TEST(ClassCurveTest, ACalibrationThatDoesNotSayItsWalkIsNoPoint) {
  EXPECT_FALSE(CanaryWalkOf(Canary(0, 0, 32, 100e-9)).has_value());
  EXPECT_FALSE(CanaryWalkOf(Canary(16, 0, 32, 100e-9)).has_value());
  EXPECT_FALSE(CanaryWalkOf(Canary(16, 16, 0, 100e-9)).has_value());
  EXPECT_FALSE(CanaryWalkOf(Canary(16, 17, 32, 100e-9)).has_value());
  EXPECT_FALSE(CanaryWalkOf(Canary(16, 16, 32, 0)).has_value());
  EXPECT_TRUE(CanaryWalkOf(Canary(16, 16, 32, 1e-9)).has_value());
}

}  // namespace
}  // namespace tracehealth::server
