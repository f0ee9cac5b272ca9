#include "server/calibration/report_pricer.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/report/stored_report.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'796'139'600);

// A host of "QEMU TCG CPU version 2.5+ / 6.1" as its agent reports it:
// 128,000 threads, none with a shadow stack, B = 32: V = 256,067,999
// visits, walk at the seed 88.7 ns 22.72379151 s.
v1::HostReport Qemu(const std::string& host, uint64_t seq) {
  SampleHost h;
  h.host_id = host;
  h.threads = 128000;
  h.kernel_release = "6.1.0-28-amd64";
  h.preempt = v1::PREEMPT_MODE_VOLUNTARY;
  v1::HostReport r = SampleReport(h, seq, kT0);
  r.mutable_snapshot()->mutable_cpus()->set_model_name(
      "QEMU TCG CPU version 2.5+");
  return r;
}

double Walk(const v1::HostReport& r) {
  for (const v1::AttachPrediction& a : r.predictions().attach()) {
    if (a.probe_kind() == v1::PROBE_KIND_FUNCTION_GRAPH_TRACER)
      return a.walk_seconds();
  }
  return -1;
}

class ReportPricerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Canaries at 300, 500, 400 ns: the class prices at 400 ns, 2 ms.
    const double visits[] = {300e-9, 500e-9, 400e-9};
    for (int i = 0; i < 3; ++i) {
      v1::Calibration c;
      c.set_host_id("canary-" + std::to_string(i));
      c.set_hardware_class("QEMU TCG CPU version 2.5+ / 6.1");
      c.set_c_visit_seconds(visits[i]);
      c.set_fixed_seconds(2e-3);
      c.mutable_measured_at()->set_seconds(1796139600);
      ASSERT_TRUE(classes_.Add(c));
    }
  }

  ReportPricer::Options Options() {
    ReportPricer::Options o;
    o.classes = &classes_;
    o.latest_seq = [this](const std::string& host) {
      ++latest_asked_[host];
      auto it = stored_.find(host);
      return it == stored_.end() ? uint64_t{0} : it->second.seq();
    };
    o.read_report = [this](const std::string& host,
                           uint64_t seq) -> absl::StatusOr<std::string> {
      ++reads_[host];
      auto it = stored_.find(host);
      if (it == stored_.end() || it->second.seq() != seq)
        return absl::NotFoundError(host);
      return it->second.SerializeAsString();
    };
    return o;
  }

  ClassCalibrations classes_;
  // Each host's newest stored report (the index's seq).
  std::map<std::string, v1::HostReport> stored_;
  std::map<std::string, int> latest_asked_, reads_;
};

TEST_F(ReportPricerTest, PricesEachReportOnceAndReadsEachPreviousOnce) {
  stored_["guest-1"] = Qemu("guest-1", 1);
  v1::HostReport own = Qemu("own-1", 1);
  own.mutable_calibration()->set_c_visit_seconds(120e-9);
  own.mutable_calibration()->mutable_measured_at()->set_seconds(1796139600);
  std::vector<CommittedReport> batch = {
      {StoredReport::Of(Qemu("guest-1", 2)), kT0},
      {StoredReport::Of(Qemu("guest-1", 3)), kT0},
      {StoredReport::Of(own), kT0}};
  ReportPricer pricer(Options());
  PricedBatch priced = pricer.Price(batch);
  ASSERT_EQ(priced.size(), 3u);
  // guest-1 has no calibration: both its reports at the class's 400 ns,
  // 400e-9 * 256,067,999 + 8 ms + 2.56 ms = 102.4377596 s; one model run
  // each. own-1 keeps its own (as sent, no run).
  EXPECT_TRUE(priced.class_priced(0));
  EXPECT_TRUE(priced.class_priced(1));
  EXPECT_FALSE(priced.class_priced(2));
  EXPECT_NEAR(Walk(*priced.shown(0)), 102.4377596, 1e-6);
  EXPECT_NEAR(Walk(*priced.shown(1)), 102.4377596, 1e-6);
  EXPECT_EQ(priced.shown(0)->calibration().origin(),
            v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION);
  EXPECT_EQ(priced.shown(2).get(), batch[2].report->report().get());
  EXPECT_EQ(pricer.stats().model_runs, 2u);
  // The index is asked once per host.
  EXPECT_EQ(latest_asked_["guest-1"], 1);
  EXPECT_EQ(priced.PreviousSeq("guest-1"), 1u);
  EXPECT_EQ(priced.PreviousSeq("own-1"), 0u);
  EXPECT_EQ(pricer.stats().previous_reads, 0u);  // nobody asked yet

  // Alerting and the recorder both ask: one read, one more model run.
  std::shared_ptr<const v1::HostReport> a = priced.Previous("guest-1");
  std::shared_ptr<const v1::HostReport> b = priced.Previous("guest-1");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->seq(), 1u);
  EXPECT_NEAR(Walk(*a), 102.4377596, 1e-6);
  EXPECT_EQ(reads_["guest-1"], 1);
  EXPECT_EQ(pricer.stats().previous_reads, 1u);
  EXPECT_EQ(pricer.stats().model_runs, 3u);
  // A host without a previous report: nothing read.
  EXPECT_EQ(priced.Previous("own-1"), nullptr);
  EXPECT_EQ(reads_["own-1"], 0);
  EXPECT_EQ(pricer.stats().batches, 1u);
  EXPECT_EQ(pricer.stats().reports, 3u);
}

TEST_F(ReportPricerTest, WithoutClassConstantsNothingIsPriced) {
  ReportPricer::Options o = Options();
  ClassCalibrations none;
  o.classes = &none;
  ReportPricer pricer(o);
  std::vector<CommittedReport> batch = {
      {StoredReport::Of(Qemu("guest-1", 2)), kT0}};
  PricedBatch priced = pricer.Price(batch);
  EXPECT_FALSE(priced.class_priced(0));
  EXPECT_NEAR(Walk(*priced.shown(0)), 22.72379151, 1e-6);
  EXPECT_EQ(pricer.stats().model_runs, 0u);
  // A previous report that cannot be read is none.
  EXPECT_EQ(priced.Previous("guest-1"), nullptr);
  EXPECT_EQ(AsCommitted(batch).shown(0).get(), batch[0].report->report().get());
}

}  // namespace
}  // namespace tracehealth::server
