#include "tools/tracehealthctl/accuracy_table.h"

#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

TEST(AccuracyTableTest, RequestFromFlags) {
  auto req = AccuracyRequestOf(absl::Hours(24), 50, kNow);
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->from().seconds(), 1'700'000'000 - 86'400);
  EXPECT_EQ(req->to().seconds(), 1'700'000'000);
  EXPECT_EQ(req->limit(), 50u);
  EXPECT_EQ(AccuracyRequestOf(absl::ZeroDuration(), 0, kNow).status().message(),
            "--since=0: want a positive duration");
}

TEST(AccuracyTableTest, ClassesThenEvents) {
  v1::AccuracyResponse resp;
  v1::ClassAccuracy* c = resp.add_classes();
  c->set_hardware_class("QEMU TCG CPU version 2.5+ / 6.1");
  c->set_canaries(3);
  c->set_calibrations(4);
  c->set_c_visit_median_seconds(412.5e-9);
  c->set_c_visit_min_seconds(400e-9);
  c->set_c_visit_max_seconds(450e-9);
  c->set_c_visit_spread(0.1212);
  c->set_fixed_median_seconds(2.5e-3);
  c->set_hosts(7);
  c->set_events(2);
  c->set_events_predicted(1);
  c->set_events_missed(1);
  c->set_median_ratio(4.5);
  c->set_median_calibrated_ratio(0.95);
  // Priced by a curve through three canaries' points.
  c->set_c_visit_seconds(400e-9);
  v1::VisitLevel* l = c->add_visit_levels();
  l->set_from_tasks(11585.2);
  l->set_factor(1.2);
  l = c->add_visit_levels();
  l->set_from_tasks(23170.7);
  l->set_factor(1.4567);
  c->set_curve_points(3);
  c->set_curve_min_threads(8192);
  c->set_curve_max_threads(32768);
  v1::EventAccuracy* s = c->add_samples();
  s->set_host_id("lab-1");
  s->set_kind(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  s->mutable_logged_at()->set_seconds(1'700'000'000 - 90);
  s->set_observed_seconds(26);
  s->set_predicted_seconds(5.8);
  s->set_ratio(26 / 5.8);
  resp.add_classes()->set_hardware_class("Other / 6.12");
  resp.set_events_unclassified(2);
  std::ostringstream out;
  PrintAccuracy(resp, out);
  const std::string text = out.str();
  for (const char* want :
       {"QEMU TCG CPU version 2.5+ / 6.1", "3 (4 calibrations)", "412.5",
        "400.0-450.0", "12%",
        "400.0, x1.46 past 23171 tasks (3 points, 8192-32768 threads)",
        "2.5 ms", "2 (1/1/0)", "4.50", "0.95",
        "2 class(es), 2 event(s) of no known class\n", "lab-1", "soft lockup",
        "26 s", "5.80 s", "4.48", "1 event(s) compared\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  // The class without calibrations shows dashes.
  EXPECT_NE(text.find("Other / 6.12"), std::string::npos);
}

}  // namespace
}  // namespace tracehealth::server
