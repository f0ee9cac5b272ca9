// A fleet-wide PredictAttach gives the same answer on one scan thread and
// on two: counts, the worst hosts in order (ties by host id) and the plan's
// waves. The sample fleet repeats a few host shapes, so most hosts tie with
// thousands of others on risk and latency.
#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "server/index/host_index.h"
#include "server/query/query_service.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

// 5,000 hosts: 5,000 / 2,000 (kHostsPerScanThread) = 2 scan threads.
constexpr int kHosts = 5000;

v1::PredictAttachResponse Ask(const HostIndex& index, int threads,
                              const v1::PredictAttachRequest& req) {
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  QueryOptions o;
  o.now = [now] { return now; };
  o.scan_threads = threads;
  QueryService service(&index, nullptr, nullptr, o);
  v1::PredictAttachResponse resp;
  grpc::Status st = service.DoPredictAttach(req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return resp;
}

TEST(ScanThreadsTest, OneAndTwoThreadsAnswerTheSame) {
  static_assert(kHosts / kHostsPerScanThread == 2);
  HostIndex index;
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  std::vector<CommittedReport> batch;
  for (int i = 0; i < kHosts; ++i) {
    batch.push_back(
        {StoredReport::Of(SampleReport(FleetHost(i), 1, now)), now});
  }
  index.Apply(batch);
  ASSERT_EQ(index.size(), static_cast<size_t>(kHosts));

  v1::PredictAttachRequest req;
  req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  req.mutable_what_if()->set_threads(400000);
  req.set_limit(200);
  v1::PredictAttachRequest plan = req;
  plan.mutable_plan()->mutable_max_latency()->set_seconds(2);
  plan.mutable_plan()->set_wave_host_ids(300);

  for (const v1::PredictAttachRequest* r : {&req, &plan}) {
    const v1::PredictAttachResponse one = Ask(index, 1, *r);
    const v1::PredictAttachResponse two = Ask(index, 2, *r);
    EXPECT_EQ(one.matched_hosts(), static_cast<uint32_t>(kHosts));
    ASSERT_EQ(one.answers_size(), 200);
    // Ties: the first two answers share risk and latency, so their order
    // is the host ids'.
    EXPECT_EQ(one.answers(0).prediction().latency_seconds(),
              one.answers(1).prediction().latency_seconds());
    EXPECT_LT(one.answers(0).host_id(), one.answers(1).host_id());
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(one, two))
        << "one thread:\n"
        << one.ShortDebugString().substr(0, 2000) << "\ntwo threads:\n"
        << two.ShortDebugString().substr(0, 2000);
    EXPECT_EQ(one.SerializeAsString(), two.SerializeAsString());
  }
  const v1::PredictAttachResponse p = Ask(index, 2, plan);
  EXPECT_EQ(p.plan().safe() + p.plan().over_budget() + p.plan().lockup_risk() +
                p.plan().unknown(),
            static_cast<uint32_t>(kHosts));
}

}  // namespace
}  // namespace tracehealth::server
