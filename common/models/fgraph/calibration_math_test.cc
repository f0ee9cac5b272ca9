#include "common/models/fgraph/calibration_math.h"

#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// c_pass 2 us, c_alloc 20 ns (the model's assumptions).
WalkConstants Assumed(double c_visit) {
  WalkConstants c;
  c.c_visit = c_visit;
  c.c_pass = 2e-6;
  c.c_alloc = 20e-9;
  return c;
}

// One point: the first and second enable with `total` threads, `fresh`
// of them without a stack.
absl::StatusOr<DerivedConstants> FitOne(double first, double second,
                                        uint64_t total, uint64_t fresh,
                                        uint32_t batch,
                                        const WalkConstants& c) {
  return FitCalibration({{total, fresh, first, second}}, batch, c);
}

TEST(FitCalibrationTest, RecoversTheConstantsOfHandWorkedEnables) {
  // 1000 threads, 100 fresh at the tail, B = 32: F = ceil(100/32) = 4
  // passes, k = 3 stop early, each after the 900 served threads:
  //   V1 = 3 * (900 + 1) + 32 * 3 * 4 / 2 + 1000 = 2703 + 192 + 1000 = 3895
  // With c_visit 100 ns and fixed 50 us:
  //   first  = 50 + 0.1 * 3895 + 2 * 4 + 0.02 * 100 = 449.5 us
  //   second = 50 + 0.1 * 1000 + 2 = 152 us
  // and back: (449.5 - 152 - 2 * 3 - 0.02 * 100) / (3895 - 1000)
  //   = 289.5 / 2895 us = 100 ns; fixed = 152 - 100 - 2 = 50 us.
  absl::StatusOr<DerivedConstants> d =
      FitOne(449.5e-6, 152e-6, 1000, 100, 32, Assumed(0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->c_visit_seconds, 100e-9, 1e-15);
  EXPECT_NEAR(d->fixed_seconds, 50e-6, 1e-12);
  // One point cannot tell c_pass from c_visit: the assumed one is kept.
  EXPECT_FALSE(d->c_pass_fitted);
  EXPECT_EQ(d->c_pass_seconds, 2e-6);
}

TEST(FitCalibrationTest, PricesEachPassAtItsLevel) {
  // The hand-worked point above with a visit twice as dear in passes of
  // 960 tasks or more: the passes visit 933, 965, 997 and 1000 tasks, so
  //   weighted V1 = 933 + 2 * (965 + 997 + 1000) = 6857, one pass 2 * 1000;
  //   first  = 50 + 0.1 * 6857 + 2 * 4 + 0.02 * 100 = 745.7 us
  //   second = 50 + 0.1 * 2000 + 2 = 252 us
  // and back: (745.7 - 252 - 2 * 3 - 2) / (6857 - 2000) = 100 ns.
  WalkConstants assumed = Assumed(0);
  assumed.levels = {{960, 2}};
  absl::StatusOr<DerivedConstants> d =
      FitOne(745.7e-6, 252e-6, 1000, 100, 32, assumed);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->c_visit_seconds, 100e-9, 1e-15);
  EXPECT_NEAR(d->fixed_seconds, 50e-6, 1e-12);
  // One price for every pass reads the same enables as 168 ns a visit.
  d = FitOne(745.7e-6, 252e-6, 1000, 100, 32, Assumed(0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->c_visit_seconds, 485.7e-6 / 2895, 1e-15);
}

// 1000 threads with stacks, then K fresh ones at the tail, B = 32, priced
// at c_visit 100 ns, c_pass 50 us (an emulator's pass), c_alloc 20 ns,
// fixed 50 us:
//   K = 100: N_total 1100, F = 4, k = 3: V1 = 3 * 1001 + 32 * 3 * 4 / 2 +
//     1100 = 3003 + 192 + 1100 = 4295, P1 = 4: X = 3195, Y = 3;
//     first  = 50 + 429.5 + 50 * 4 + 2 = 681.5 us, second = 50 + 110 + 50
//            = 210 us.
//   K = 200: N_total 1200, F = 7, k = 6: V1 = 6 * 1001 + 32 * 6 * 7 / 2 +
//     1200 = 6006 + 672 + 1200 = 7878, P1 = 7: X = 6678, Y = 6;
//     first  = 50 + 787.8 + 350 + 4 = 1191.8 us, second = 50 + 120 + 50
//            = 220 us.
std::vector<CalibrationPoint> TwoPoints() {
  return {{1100, 100, 681.5e-6, 210e-6}, {1200, 200, 1191.8e-6, 220e-6}};
}

TEST(FitCalibrationTest, TwoPointsSeparateThePassFromTheVisit) {
  absl::StatusOr<DerivedConstants> d =
      FitCalibration(TwoPoints(), 32, Assumed(0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->c_pass_fitted);
  EXPECT_NEAR(d->c_visit_seconds, 100e-9, 1e-15);
  EXPECT_NEAR(d->c_pass_seconds, 50e-6, 1e-12);
  // fixed = mean(210 - 110 - 50, 220 - 120 - 50) = 50 us.
  EXPECT_NEAR(d->fixed_seconds, 50e-6, 1e-12);
  // The larger point alone, with the assumed 2 us a pass, books the passes
  // into c_visit: d = 1191.8 - 220 - 4 = 967.8 us, (967.8 - 2 * 6) / 6678
  // = 143.13 ns, 43 % high.
  absl::StatusOr<DerivedConstants> one =
      FitOne(1191.8e-6, 220e-6, 1200, 200, 32, Assumed(0));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_NEAR(one->c_visit_seconds, 955.8e-6 / 6678, 1e-15);
}

TEST(FitCalibrationTest, ThreeConsistentPointsGiveTheSameConstants) {
  // A third point, K = 64: N_total 1064, F = 2, k = 1: V1 = 1001 + 32 +
  // 1064 = 2097, P1 = 2; first = 50 + 209.7 + 100 + 1.28 = 360.98 us,
  // second = 50 + 106.4 + 50 = 206.4 us.
  std::vector<CalibrationPoint> points = TwoPoints();
  points.insert(points.begin(), {1064, 64, 360.98e-6, 206.4e-6});
  absl::StatusOr<DerivedConstants> d = FitCalibration(points, 32, Assumed(0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->c_pass_fitted);
  EXPECT_NEAR(d->c_visit_seconds, 100e-9, 1e-14);
  EXPECT_NEAR(d->c_pass_seconds, 50e-6, 1e-11);
  EXPECT_NEAR(d->fixed_seconds, 50e-6, 1e-11);
}

TEST(FitCalibrationTest, ANegativePassCostIsNotTaken) {
  // No cost a pass, but a visit dearer at the larger point (100 then 150
  // ns): d = 319.5 and 1001.7 us, with seconds 150 and 230 us: first =
  // d + second + c_alloc * K = 471.5 and 1235.7 us. The exact fit of the
  // two would be c_visit 1,259 ns and c_pass -1,235 us: refused, c_pass
  // stays the assumed 2 us and c_visit = sum(w X (d - 2 Y)) / sum(w X^2),
  // w = 1 / first^2:
  //   (3195 * 313.5 / 471.5^2 + 6678 * 989.7 / 1235.7^2)
  //   / (3195^2 / 471.5^2 + 6678^2 / 1235.7^2) = 117.5921 ns.
  std::vector<CalibrationPoint> points = {{1100, 100, 471.5e-6, 150e-6},
                                          {1200, 200, 1235.7e-6, 230e-6}};
  absl::StatusOr<DerivedConstants> d = FitCalibration(points, 32, Assumed(0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->c_pass_fitted);
  EXPECT_EQ(d->c_pass_seconds, 2e-6);
  EXPECT_NEAR(d->c_visit_seconds, 117.5921e-9, 1e-13);
}

TEST(FitCalibrationTest, RefusesAPointWhoseFirstEnableIsNotSlower) {
  std::vector<CalibrationPoint> points = TwoPoints();
  // d = first - second - 0.02 * 100 us must be positive: 2 us over is not.
  points[0].first_seconds = points[0].second_seconds + 2e-6;
  absl::StatusOr<DerivedConstants> d = FitCalibration(points, 32, Assumed(0));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(d.status().message().find("0.212 ms"), absl::string_view::npos)
      << d.status();
  points[0].first_seconds = points[0].second_seconds + 2.1e-6;
  EXPECT_TRUE(FitCalibration(points, 32, Assumed(0)).ok());
  EXPECT_FALSE(FitCalibration({}, 32, Assumed(0)).ok());
}

TEST(FitCalibrationTest, AllThreadsFresh) {
  // 64 threads, all fresh, B = 32: F = 2, k = 1, nothing served before:
  //   V1 = 1 * (0 + 1) + 32 * 1 * 2 / 2 + 64 = 1 + 32 + 64 = 97, P1 = 2.
  // first - second = 1 ms: (1000 - 2 * 1 - 0.02 * 64) us / (97 - 64)
  //   = 996.72 / 33 us = 30.2036... us per visit.
  absl::StatusOr<DerivedConstants> d =
      FitOne(1.5e-3, 0.5e-3, 64, 64, 32, Assumed(0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->c_visit_seconds, 996.72e-6 / 33, 1e-12);
  // fixed = 500 - 30.2036 * 64 - 2 < 0: clamped to 0.
  EXPECT_EQ(d->fixed_seconds, 0);
}

TEST(FitCalibrationTest, RefusesAFirstEnableNoSlowerThanTheSecond) {
  // With the numbers above, first - second must exceed
  // 2 * 3 + 0.02 * 100 = 8 us: 7.9 us leaves no walk, 8.1 us does.
  absl::StatusOr<DerivedConstants> d =
      FitOne(152e-6 + 7.9e-6, 152e-6, 1000, 100, 32, Assumed(0));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(d.status().message().find("0.160 ms"), absl::string_view::npos)
      << d.status();
  EXPECT_NE(d.status().message().find("0.152 ms"), absl::string_view::npos);
  d = FitOne(152e-6 + 8.1e-6, 152e-6, 1000, 100, 32, Assumed(0));
  ASSERT_TRUE(d.ok()) << d.status();
  // 0.1 us / 2895 visits.
  EXPECT_NEAR(d->c_visit_seconds, 0.1e-6 / 2895, 1e-16);
}

TEST(FitCalibrationTest, RefusesWhenNoThreadWasFresh) {
  absl::StatusOr<DerivedConstants> d =
      FitOne(1e-3, 0.5e-3, 1000, 0, 32, Assumed(0));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("0 threads without a shadow stack"),
            absl::string_view::npos)
      << d.status();
}

// c_visit 100 ns, no other cost: seconds = 1e-7 * V.
WalkConstants VisitsOnly() {
  WalkConstants c;
  c.c_visit = 100e-9;
  return c;
}

TEST(PredictCalibrationWalkTest, AddsTheThreadsAtTheTail) {
  // 1000 threads with stacks, K = 64: N_total = 1064, N_fresh = 64, F = 2,
  // k = 1: V = 1 * (1000 + 1) + 32 + 1064 = 2097; with fixed 5 us:
  // 5 + 0.1 * 2097 = 214.7 us.
  CalibrationHost host{1000, 0, 32};
  CalibrationWalk w = PredictCalibrationWalk(host, 64, VisitsOnly(), 5e-6);
  EXPECT_EQ(w.total_threads, 1064u);
  EXPECT_EQ(w.fresh_threads, 64u);
  EXPECT_EQ(w.walk.passes, 2u);
  EXPECT_DOUBLE_EQ(w.walk.visits, 2097);
  EXPECT_NEAR(w.seconds, 214.7e-6, 1e-12);
  // 10 of the host's threads also lack a stack: N_fresh = 74.
  host.null_threads = 10;
  EXPECT_EQ(PredictCalibrationWalk(host, 64, VisitsOnly(), 0).fresh_threads,
            74u);
}

TEST(ChooseCalibrationThreadsTest, LargestKUnderTheBudget) {
  CalibrationHost host{1000, 0, 32};
  // K = 63: V = 1001 + 32 + 1063 = 2096 -> 209.6 us; K = 64: 209.7 us;
  // K = 65 needs a third pass: V = 2 * 1001 + 32 * 2 * 3 / 2 + 1065 = 3163
  // -> 316.3 us.
  EXPECT_EQ(ChooseCalibrationThreads(host, 250e-6, 1 << 15, VisitsOnly(), 0),
            64u);
  EXPECT_EQ(ChooseCalibrationThreads(host, 209.75e-6, 1 << 15, VisitsOnly(), 0),
            64u);
  EXPECT_EQ(ChooseCalibrationThreads(host, 209.65e-6, 1 << 15, VisitsOnly(), 0),
            63u);
  // K = 66: V = 2002 + 96 + 1066 = 3164 -> 316.4 us.
  EXPECT_EQ(ChooseCalibrationThreads(host, 316.35e-6, 1 << 15, VisitsOnly(), 0),
            65u);
  // The cap.
  EXPECT_EQ(ChooseCalibrationThreads(host, 1.0, 10, VisitsOnly(), 0), 10u);
  // K = 1: V = 0 * 1001 + 0 + 1001 -> 100.1 us: nothing fits in 100 us.
  EXPECT_EQ(ChooseCalibrationThreads(host, 100e-6, 1 << 15, VisitsOnly(), 0),
            0u);
  // K = 2: V = 1002 -> 100.2 us.
  EXPECT_EQ(ChooseCalibrationThreads(host, 100.15e-6, 1 << 15, VisitsOnly(), 0),
            1u);
}

}  // namespace
}  // namespace tracehealth
