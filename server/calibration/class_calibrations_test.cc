#include "server/calibration/class_calibrations.h"

#include <cmath>

#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

constexpr char kClass[] = "QEMU TCG CPU version 2.5+ / 6.1";

v1::Calibration Cal(const std::string& host, int64_t at_s, double c_visit,
                    double fixed, const std::string& cls = kClass) {
  v1::Calibration c;
  c.set_host_id(host);
  c.set_hardware_class(cls);
  *c.mutable_measured_at() = ToProto(absl::FromUnixSeconds(at_s));
  c.set_c_visit_seconds(c_visit);
  c.set_fixed_seconds(fixed);
  return c;
}

TEST(ClassCalibrationsTest, MediansOverEachCanarysNewestCalibration) {
  ClassCalibrations classes;
  EXPECT_FALSE(classes.Of(kClass).has_value());
  classes.Add(Cal("a", 100, 100e-9, 1e-3));
  classes.Add(Cal("b", 100, 300e-9, 3e-3));
  classes.Add(Cal("c", 100, 200e-9, 2e-3));
  std::optional<ClassConstants> k = classes.Of(kClass);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->canaries, 3u);
  EXPECT_EQ(k->calibrations, 3u);
  // Median of 100, 200, 300 ns; of 1, 2, 3 ms.
  EXPECT_DOUBLE_EQ(k->c_visit_median, 200e-9);
  EXPECT_DOUBLE_EQ(k->fixed_median, 2e-3);
  EXPECT_DOUBLE_EQ(k->c_visit_min, 100e-9);
  EXPECT_DOUBLE_EQ(k->c_visit_max, 300e-9);
  EXPECT_EQ(k->Constants().source,
            "3 canaries of class QEMU TCG CPU version 2.5+ / 6.1");

  // "a" calibrates again (newer): 400 ns replaces its 100 ns; an older one
  // arriving late changes nothing. Median of 200, 300, 400 = 300 ns.
  classes.Add(Cal("a", 200, 400e-9, 4e-3));
  classes.Add(Cal("a", 50, 1e-9, 1e-6));
  k = classes.Of(kClass);
  EXPECT_EQ(k->canaries, 3u);
  EXPECT_EQ(k->calibrations, 5u);
  EXPECT_DOUBLE_EQ(k->c_visit_median, 300e-9);
  // A fourth canary: median of 200, 300, 400, 500 = (300 + 400) / 2.
  classes.Add(Cal("d", 100, 500e-9, 5e-3));
  EXPECT_DOUBLE_EQ(classes.Of(kClass)->c_visit_median, 350e-9);
}

TEST(ClassCalibrationsTest, PassCostMedianOverTheCanariesThatFittedOne) {
  ClassCalibrations classes;
  classes.Add(Cal("a", 100, 100e-9, 1e-3));
  EXPECT_EQ(classes.Of(kClass)->c_pass_median, 0);
  EXPECT_EQ(classes.Of(kClass)->Constants().c_pass_seconds, 0);
  v1::Calibration b = Cal("b", 100, 300e-9, 3e-3);
  b.set_c_pass_seconds(200e-6);
  b.set_c_pass_fitted(true);
  classes.Add(b);
  // An assumed one is not counted.
  v1::Calibration c = Cal("c", 100, 200e-9, 2e-3);
  c.set_c_pass_seconds(2e-6);
  classes.Add(c);
  EXPECT_DOUBLE_EQ(classes.Of(kClass)->c_pass_median, 200e-6);
  v1::Calibration d = Cal("d", 100, 200e-9, 2e-3);
  d.set_c_pass_seconds(400e-6);
  d.set_c_pass_fitted(true);
  classes.Add(d);
  // (200 + 400) / 2 us.
  EXPECT_DOUBLE_EQ(classes.Of(kClass)->c_pass_median, 300e-6);
  EXPECT_DOUBLE_EQ(classes.Of(kClass)->Constants().c_pass_seconds, 300e-6);
}

// `Cal` with the walk of its largest point: `threads` threads, all fresh,
// batch 2.
v1::Calibration Walked(const std::string& host, uint64_t threads,
                       double c_visit) {
  v1::Calibration c = Cal(host, 100, c_visit, 1e-3);
  c.set_total_threads(threads);
  c.set_fresh_threads(threads);
  c.set_batch(2);
  return c;
}

// Canaries at 8 and 16 threads (100 and 150 ns a visit) and one older
// calibration without its walk (300 ns): the median counts all three, the
// curve (class_curve_test's two points) the two that say their walk, and
// the class's hosts are priced with the curve: 100 ns from the fewest
// threads, a level from sqrt(8 x 16) tasks at 83.5 / 44.
TEST(ClassCalibrationsTest, HostsArePricedWithTheCurveThroughTheCanaries) {
  ClassCalibrations classes;
  classes.Add(Walked("a", 16, 150e-9));
  classes.Add(Walked("b", 8, 100e-9));
  classes.Add(Cal("c", 100, 300e-9, 1e-3));
  std::optional<ClassConstants> k = classes.Of(kClass);
  ASSERT_TRUE(k.has_value());
  EXPECT_DOUBLE_EQ(k->c_visit_median, 150e-9);
  EXPECT_EQ(k->curve.points, 2);
  EXPECT_DOUBLE_EQ(k->c_visit_seconds(), 100e-9);
  CalibratedConstants constants = k->Constants();
  EXPECT_DOUBLE_EQ(constants.c_visit_seconds, 100e-9);
  ASSERT_EQ(constants.visit_levels.size(), 1u);
  EXPECT_DOUBLE_EQ(constants.visit_levels[0].from_tasks, std::sqrt(128.0));
  EXPECT_NEAR(constants.visit_levels[0].factor, 83.5 / 44, 1e-12);
  EXPECT_EQ(constants.origin, ConstantsOrigin::kClassCalibration);

  // "b" calibrates again at 16 threads: the two points are one (the median
  // of 150 and 130 ns), one price, no level.
  v1::Calibration again = Walked("b", 16, 130e-9);
  *again.mutable_measured_at() = ToProto(absl::FromUnixSeconds(200));
  classes.Add(again);
  k = classes.Of(kClass);
  EXPECT_EQ(k->curve.points, 1);
  EXPECT_DOUBLE_EQ(k->c_visit_seconds(), 140e-9);
  EXPECT_TRUE(k->Constants().visit_levels.empty());
}

// Without a canary that says its walk, the median prices, one price.
TEST(ClassCalibrationsTest, WithoutWalksTheMedianPrices) {
  ClassCalibrations classes;
  classes.Add(Cal("a", 100, 100e-9, 1e-3));
  classes.Add(Cal("b", 100, 300e-9, 1e-3));
  std::optional<ClassConstants> k = classes.Of(kClass);
  EXPECT_EQ(k->curve.points, 0);
  EXPECT_DOUBLE_EQ(k->c_visit_seconds(), 200e-9);
  EXPECT_DOUBLE_EQ(k->Constants().c_visit_seconds, 200e-9);
  EXPECT_TRUE(k->Constants().visit_levels.empty());
}

TEST(ClassCalibrationsTest, ClassesAreApart) {
  ClassCalibrations classes;
  classes.Add(Cal("a", 100, 100e-9, 0));
  classes.Add(Cal("b", 100, 90e-9, 0, "QEMU TCG CPU version 2.5+ / 6.12"));
  classes.Add(Cal("c", 100, 90e-9, 0, ""));  // no class: not counted
  std::vector<ClassConstants> all = classes.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].hardware_class, kClass);
  EXPECT_EQ(all[0].canaries, 1u);
  EXPECT_EQ(all[0].Constants().source,
            "1 canary of class QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ(all[1].hardware_class, "QEMU TCG CPU version 2.5+ / 6.12");
  EXPECT_DOUBLE_EQ(all[1].c_visit_median, 90e-9);
}

// Stores `c` as CalibrationIntake does.
void Store(CalibrationStore& store, const v1::Calibration& c) {
  absl::StatusOr<bool> put =
      store.PutCalibration(CalibrationRowOf(c, absl::FromUnixSeconds(1)));
  ASSERT_TRUE(put.ok()) << put.status();
  ASSERT_TRUE(*put);
}

TEST(ClassCalibrationsTest, LoadingAgainCountsOnlyWhatIsNew) {
  auto s = SqliteStorage::Open(testing::NewTempDir("classes") + "/db");
  ASSERT_TRUE(s.ok()) << s.status();
  SqliteStorage& store = **s;
  ASSERT_NO_FATAL_FAILURE(Store(store, Cal("a", 100, 100e-9, 1e-3)));
  ASSERT_NO_FATAL_FAILURE(Store(store, Cal("b", 100, 300e-9, 3e-3)));
  ASSERT_NO_FATAL_FAILURE(Store(store, Cal("c", 100, 200e-9, 2e-3)));

  ClassCalibrations classes;
  EXPECT_EQ(classes.version(), 0u);
  ASSERT_TRUE(classes.LoadFrom(store).ok());
  const uint64_t loaded = classes.version();
  EXPECT_GT(loaded, 0u);
  // Median of 100, 200, 300 ns; of 1, 2, 3 ms.
  EXPECT_DOUBLE_EQ(classes.Of(kClass)->c_visit_median, 200e-9);

  // The same store again, and a calibration already counted added again:
  // nothing changed, so neither does the version nor the count.
  ASSERT_TRUE(classes.LoadFrom(store).ok());
  EXPECT_FALSE(classes.Add(Cal("b", 100, 300e-9, 3e-3)));
  EXPECT_EQ(classes.version(), loaded);
  std::optional<ClassConstants> k = classes.Of(kClass);
  EXPECT_EQ(k->canaries, 3u);
  EXPECT_EQ(k->calibrations, 3u);
  EXPECT_DOUBLE_EQ(k->c_visit_median, 200e-9);
  EXPECT_DOUBLE_EQ(k->fixed_median, 2e-3);

  // Another replica stores a newer calibration of "a": 600 ns, 6 ms. The
  // class is now over 200, 300, 600 ns (median 300 ns) and 2, 3, 6 ms
  // (median 3 ms); "a"'s older 100 ns no longer counts.
  ASSERT_NO_FATAL_FAILURE(Store(store, Cal("a", 200, 600e-9, 6e-3)));
  ASSERT_TRUE(classes.LoadFrom(store).ok());
  EXPECT_GT(classes.version(), loaded);
  k = classes.Of(kClass);
  EXPECT_EQ(k->canaries, 3u);
  EXPECT_EQ(k->calibrations, 4u);
  CalibratedConstants constants = k->Constants();
  EXPECT_DOUBLE_EQ(constants.c_visit_seconds, 300e-9);
  EXPECT_DOUBLE_EQ(constants.fixed_seconds, 3e-3);
  EXPECT_EQ(constants.source,
            "3 canaries of class QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_DOUBLE_EQ(k->c_visit_min, 200e-9);
  EXPECT_DOUBLE_EQ(k->c_visit_max, 600e-9);
  const uint64_t newer = classes.version();
  ASSERT_TRUE(classes.LoadFrom(store).ok());
  EXPECT_EQ(classes.version(), newer);
}

}  // namespace
}  // namespace tracehealth::server
