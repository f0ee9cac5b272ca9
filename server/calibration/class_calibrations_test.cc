#include "server/calibration/class_calibrations.h"

#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

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

TEST(MedianTest, OddAndEven) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3}), 3);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  // (2 + 3) / 2.
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
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

}  // namespace
}  // namespace tracehealth::server
