#include "server/calibration/calibrated_report.h"

#include <cmath>

#include "absl/time/time.h"
#include "common/models/explain.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

constexpr char kClass[] = "Intel(R) Xeon(R) Platinum 8480+ / 6.16";

std::shared_ptr<const v1::HostReport> Report() {
  SampleHost h;
  h.host_id = "h1";
  h.threads = 3200;
  return std::make_shared<v1::HostReport>(
      SampleReport(h, 1, absl::FromUnixSeconds(1796139600)));
}

const v1::AttachPrediction& Graph(const v1::HostReport& r) {
  for (const auto& a : r.predictions().attach()) {
    if (a.probe_kind() == v1::PROBE_KIND_FUNCTION_GRAPH_TRACER) return a;
  }
  static const v1::AttachPrediction none;
  return none;
}

void AddThreeCanaries(ClassCalibrations& classes) {
  const double visits[] = {100e-9, 300e-9, 200e-9};
  const double fixed[] = {1e-3, 3e-3, 2e-3};
  for (int i = 0; i < 3; ++i) {
    v1::Calibration c;
    c.set_host_id("canary-" + std::to_string(i));
    c.set_hardware_class(kClass);
    c.set_c_visit_seconds(visits[i]);
    c.set_fixed_seconds(fixed[i]);
    classes.Add(c);
  }
}

TEST(CalibratedReportTest, AHostWithoutItsOwnUsesItsClass) {
  std::shared_ptr<const v1::HostReport> r = Report();
  EXPECT_EQ(ReportHardwareClass(*r), kClass);
  EXPECT_FALSE(ReportCalibration(*r).has_value());
  // No class calibrations: the report as it is.
  ClassCalibrations empty;
  EXPECT_EQ(WithClassCalibration(r, &empty), r);
  EXPECT_EQ(WithClassCalibration(r, nullptr), r);

  ClassCalibrations classes;
  AddThreeCanaries(classes);
  std::shared_ptr<const v1::HostReport> c = WithClassCalibration(r, &classes);
  ASSERT_NE(c, r);
  EXPECT_EQ(c->calibration().class_canaries(), 3u);
  EXPECT_EQ(c->calibration().hardware_class(), kClass);
  // 3200 threads, all without a shadow stack, B = 32: 100 passes, 99 stop
  // early: V = 99 + 32 * 99 * 100 / 2 + 3200 = 161,699. With the class's
  // median 200 ns: 32.3398 ms + 2 us * 100 + 20 ns * 3200 = 32.6038 ms.
  const v1::AttachPrediction& before = Graph(*r);
  const v1::AttachPrediction& after = Graph(*c);
  ASSERT_EQ(after.passes(), 100u);
  EXPECT_DOUBLE_EQ(after.visits(), 161699);
  EXPECT_NEAR(after.walk_seconds(), 32.6038e-3, 1e-9);
  // The median fixed cost (2 ms) is added to the enable; patching as before.
  EXPECT_NEAR(after.latency_seconds(),
              32.6038e-3 + 2e-3 + before.patch_seconds(), 1e-9);
  std::optional<CalibratedConstants> k = ReportCalibration(*c);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->source,
            "3 canaries of class Intel(R) Xeon(R) Platinum 8480+ / 6.16");
  // Explained with the same constants, the basis names them.
  ModelOptions options;
  options.calibration = k;
  v1::AttachPrediction p = after;
  ExplainAttach(c->snapshot(), options, &p);
  EXPECT_EQ(p.basis().constants(0).origin(), k->source);
  EXPECT_DOUBLE_EQ(p.basis().constants(0).value(), 200e-9);
}

// Canaries at 1,600 threads (100 ns a visit) and at 3,200 (200 ns), each
// walking all its threads without a stack, B = 32. A 3,200-thread host of
// the class walks what the second canary walked (161,699 visits in 100
// passes): priced at its 200 ns, 32.3398 ms + 2 us x 100 + 20 ns x 3,200 =
// 32.6038 ms, where the median (150 ns) would say 24.2549 + 0.264 =
// 24.5189 ms. The report carries the curve's level.
TEST(CalibratedReportTest, AHostIsPricedAtItsSizeOnTheClassCurve) {
  ClassCalibrations classes;
  const uint64_t threads[] = {1600, 3200};
  const double visits[] = {100e-9, 200e-9};
  for (int i = 0; i < 2; ++i) {
    v1::Calibration c;
    c.set_host_id("canary-" + std::to_string(i));
    c.set_hardware_class(kClass);
    c.set_c_visit_seconds(visits[i]);
    c.set_fixed_seconds(2e-3);
    c.set_total_threads(threads[i]);
    c.set_fresh_threads(threads[i]);
    c.set_batch(32);
    classes.Add(c);
  }
  std::shared_ptr<const v1::HostReport> r = Report();
  std::shared_ptr<const v1::HostReport> c = WithClassCalibration(r, &classes);
  ASSERT_NE(c, r);
  EXPECT_DOUBLE_EQ(c->calibration().c_visit_seconds(), 100e-9);
  ASSERT_EQ(c->calibration().visit_levels_size(), 1);
  EXPECT_DOUBLE_EQ(c->calibration().visit_levels(0).from_tasks(),
                   std::sqrt(1600.0 * 3200.0));
  const v1::AttachPrediction& after = Graph(*c);
  ASSERT_EQ(after.passes(), 100u);
  EXPECT_DOUBLE_EQ(after.visits(), 161699);
  EXPECT_NEAR(after.walk_seconds(), 32.6038e-3, 1e-9);
  // The constants read back from the report (the index's record) are the
  // curve's.
  std::optional<CalibratedConstants> k = ReportCalibration(*c);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->visit_levels.size(), 1u);
  EXPECT_DOUBLE_EQ(k->c_visit_seconds, 100e-9);
}

TEST(CalibratedReportTest, AHostsOwnCalibrationWins) {
  auto own = std::make_shared<v1::HostReport>(*Report());
  v1::Calibration* c = own->mutable_calibration();
  c->set_c_visit_seconds(150e-9);
  c->set_fixed_seconds(1e-4);
  *c->mutable_measured_at() = ToProto(absl::FromUnixSeconds(1796139600));
  ClassCalibrations classes;
  AddThreeCanaries(classes);
  std::shared_ptr<const v1::HostReport> r = own;
  EXPECT_EQ(WithClassCalibration(r, &classes), r);
  std::optional<CalibratedConstants> k = ReportCalibration(*r);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->c_visit_seconds, 150e-9);
  EXPECT_EQ(k->source, "this host's calibration 2026-12-01T15:40:00Z");
}

}  // namespace
}  // namespace tracehealth::server
