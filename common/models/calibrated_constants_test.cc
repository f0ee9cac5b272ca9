#include "common/models/calibrated_constants.h"

#include "absl/time/time.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::Calibration Measured() {
  v1::Calibration c;
  c.set_c_visit_seconds(120e-9);
  c.set_fixed_seconds(2e-3);
  c.set_hardware_class("CPU X / 6.1");
  *c.mutable_measured_at() =
      ToProto(absl::FromUnixSeconds(1796139600));  // 2026-12-01T15:40:00Z
  return c;
}

TEST(CalibratedConstantsTest, AHostsOwnCalibration) {
  v1::Calibration c = Measured();
  for (v1::ConstantsOrigin o : {v1::CONSTANTS_ORIGIN_UNSPECIFIED,
                                v1::CONSTANTS_ORIGIN_HOST_CALIBRATION}) {
    c.set_origin(o);
    const CalibratedConstants k = ConstantsOf(c);
    EXPECT_EQ(k.origin, ConstantsOrigin::kHostCalibration) << o;
    EXPECT_DOUBLE_EQ(k.c_visit_seconds, 120e-9);
    EXPECT_DOUBLE_EQ(k.fixed_seconds, 2e-3);
    EXPECT_EQ(k.source, "this host's calibration 2026-12-01T15:40:00Z");
    // No pass cost fitted: the model's assumed one (0 here).
    EXPECT_EQ(k.c_pass_seconds, 0);
  }
}

void AddWalk(v1::Calibration* c, uint64_t tasks, double ns) {
  v1::MemoryWalkPoint* p = c->add_memory_walk();
  p->set_tasks(tasks);
  p->set_ns_per_task(ns);
}

TEST(CalibratedConstantsTest, VisitLevelsFromTheMemoryWalk) {
  v1::Calibration c = Measured();
  EXPECT_TRUE(ConstantsOf(c).visit_levels.empty());  // no walk: one price
  AddWalk(&c, 1024, 100);
  AddWalk(&c, 4096, 110);
  AddWalk(&c, 16384, 250);
  const std::vector<VisitLevel> levels = ConstantsOf(c).visit_levels;
  ASSERT_EQ(levels.size(), 2u);
  // Between two sizes, the middle on a log scale: sqrt(1024 * 4096).
  EXPECT_DOUBLE_EQ(levels[0].from_tasks, 2048);
  EXPECT_DOUBLE_EQ(levels[0].factor, 1.1);
  EXPECT_DOUBLE_EQ(levels[1].from_tasks, 8192);
  EXPECT_DOUBLE_EQ(levels[1].factor, 2.5);
  // One size: nothing to scale by.
  v1::Calibration one = Measured();
  AddWalk(&one, 1024, 100);
  EXPECT_TRUE(VisitLevelsOf(one).empty());
  // Sizes that do not grow, or a price that is not positive: one price.
  v1::Calibration bad = Measured();
  AddWalk(&bad, 4096, 100);
  AddWalk(&bad, 4096, 120);
  EXPECT_TRUE(VisitLevelsOf(bad).empty());
  bad = Measured();
  AddWalk(&bad, 1024, 100);
  AddWalk(&bad, 4096, 0);
  EXPECT_TRUE(VisitLevelsOf(bad).empty());
  bad = Measured();
  AddWalk(&bad, 1024, 0);
  AddWalk(&bad, 4096, 100);
  EXPECT_TRUE(VisitLevelsOf(bad).empty());
}

// Levels the server set (a class's curve) are the walk's, not the memory
// walk's.
TEST(CalibratedConstantsTest, TheClassCurvesLevelsWin) {
  v1::Calibration c = Measured();
  AddWalk(&c, 1024, 100);
  AddWalk(&c, 4096, 110);
  v1::VisitLevel* l = c.add_visit_levels();
  l->set_from_tasks(3000);
  l->set_factor(1.7);
  const std::vector<VisitLevel> levels = ConstantsOf(c).visit_levels;
  ASSERT_EQ(levels.size(), 1u);
  EXPECT_DOUBLE_EQ(levels[0].from_tasks, 3000);
  EXPECT_DOUBLE_EQ(levels[0].factor, 1.7);
  c.clear_visit_levels();
  ASSERT_EQ(ConstantsOf(c).visit_levels.size(), 1u);
  EXPECT_DOUBLE_EQ(ConstantsOf(c).visit_levels[0].from_tasks, 2048);
}

TEST(CalibratedConstantsTest, APassCostOnlyWhenFitted) {
  v1::Calibration c = Measured();
  // An assumed value travels in the message too: not the host's.
  c.set_c_pass_seconds(2e-6);
  EXPECT_EQ(ConstantsOf(c).c_pass_seconds, 0);
  c.set_c_pass_seconds(300e-6);
  c.set_c_pass_fitted(true);
  EXPECT_DOUBLE_EQ(ConstantsOf(c).c_pass_seconds, 300e-6);
}

TEST(CalibratedConstantsTest, AClassStandingIn) {
  v1::Calibration c = Measured();
  c.set_class_canaries(3);
  // A sender before the origin field: class_canaries says it.
  CalibratedConstants k = ConstantsOf(c);
  EXPECT_EQ(k.origin, ConstantsOrigin::kClassCalibration);
  EXPECT_EQ(k.source, "3 canaries of class CPU X / 6.1");
  c.set_origin(v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  EXPECT_EQ(ConstantsOf(c).origin, ConstantsOrigin::kClassCalibration);
  c.set_class_canaries(1);
  EXPECT_EQ(ConstantsOf(c).source, "1 canary of class CPU X / 6.1");
  // The typed field wins over the count.
  c.set_origin(v1::CONSTANTS_ORIGIN_HOST_CALIBRATION);
  EXPECT_EQ(ConstantsOf(c).origin, ConstantsOrigin::kHostCalibration);
}

TEST(CalibratedConstantsTest, OriginsMapOneToOne) {
  EXPECT_EQ(OriginToProto(ConstantsOrigin::kSeedDefault),
            v1::CONSTANTS_ORIGIN_SEED_DEFAULT);
  EXPECT_EQ(OriginToProto(ConstantsOrigin::kHostCalibration),
            v1::CONSTANTS_ORIGIN_HOST_CALIBRATION);
  EXPECT_EQ(OriginToProto(ConstantsOrigin::kClassCalibration),
            v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  EXPECT_EQ(OriginToProto(ConstantsOrigin::kWhatIf),
            v1::CONSTANTS_ORIGIN_WHAT_IF);
}

TEST(CalibratedConstantsTest, OptionsNameTheConstantsTheyPriceWith) {
  ModelOptions o;
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kSeedDefault);
  o.calibration = ConstantsOf(Measured());
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kHostCalibration);
  o.calibration->origin = ConstantsOrigin::kClassCalibration;
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kClassCalibration);
  o.calibration->c_visit_seconds = 0;  // not usable: the seed
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kSeedDefault);
  o.c_visit_seconds = 90e-9;
  EXPECT_EQ(OriginOf(o), ConstantsOrigin::kWhatIf);
}

}  // namespace
}  // namespace tracehealth
