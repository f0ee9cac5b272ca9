// Heartbeat forms (report.proto HeartbeatForm) through the real server on a
// real SQLite file: what it stores for a form (its base with what the form
// carries, worked out field by field here), that a form whose base the
// server does not hold stores nothing and ends its stream
// FAILED_PRECONDITION, that a base not held in memory is read from the store,
// replays, and the flag that turns forms off.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/report/heartbeat_form.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_test_fixture.h"

namespace tracehealth::testing {
namespace {

using google::protobuf::util::MessageDifferencer;

const absl::Time kT0 = absl::FromUnixSeconds(1790000000);  // 2026-09-21

// Report `seq` of host "hb-1" with `threads`, observed 15 s a seq after kT0.
v1::HostReport Report(uint64_t seq, uint64_t threads) {
  return server::SampleReport(Host("hb-1", threads), seq,
                              kT0 + absl::Seconds(15 * seq));
}

// Sent whole, as a base heartbeat forms may name.
v1::HostReport Base(uint64_t seq, uint64_t threads) {
  v1::HostReport r = Report(seq, threads);
  r.mutable_heartbeat();
  return r;
}

double KprobeMultiReturnLatency(const v1::HostReport& r) {
  for (const v1::AttachPrediction& a : r.predictions().attach()) {
    if (a.probe_kind() == v1::PROBE_KIND_KPROBE_MULTI_RETURN)
      return a.latency_seconds();
  }
  ADD_FAILURE() << "no kprobe_multi_return prediction";
  return -1;
}

// What the server stores for `form` on `base`, spelled out: the base with
// the form's seq, time, threads (also every attach prediction's), and its
// kprobe_multi_return latency, budget ratio and purge seconds; not marked.
v1::HostReport Expected(const v1::HostReport& base,
                        const v1::HostReport& form) {
  v1::HostReport want = base;
  want.clear_heartbeat();
  want.set_seq(form.seq());
  *want.mutable_observed_at() = form.observed_at();
  const uint64_t threads = form.snapshot().threads().total();
  want.mutable_snapshot()->mutable_threads()->set_total(threads);
  for (v1::AttachPrediction& a :
       *want.mutable_predictions()->mutable_attach()) {
    a.set_threads_total(threads);
    if (a.probe_kind() == v1::PROBE_KIND_KPROBE_MULTI_RETURN)
      a.set_latency_seconds(KprobeMultiReturnLatency(form));
  }
  if (form.predictions().stack_depot().has_budget_ratio()) {
    want.mutable_predictions()->mutable_stack_depot()->set_budget_ratio(
        form.predictions().stack_depot().budget_ratio());
  }
  if (form.predictions().has_vmap_purge()) {
    want.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(
        form.predictions().vmap_purge().purge_seconds());
  }
  return want;
}

class HeartbeatFormsTest : public ServerTest {
 protected:
  double Metric(const std::string& series) {
    absl::StatusOr<double> v = ScrapedValue(server_.metrics_addr, series);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : -1;
  }
};

TEST_F(HeartbeatFormsTest, AFormIsStoredAsItsBaseWithWhatItCarries) {
  Start();
  const v1::HostReport base = Base(1, 100000);
  const v1::HostReport r2 = Report(2, 100400);
  const v1::HostReport r3 = Report(3, 100800);
  {
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(base));
    ASSERT_TRUE(s.Send(HeartbeatFormOf(r2, 1)));
    ASSERT_TRUE(s.Send(HeartbeatFormOf(r3, 1)));
    ASSERT_TRUE(s.WaitAcked(3));
    EXPECT_TRUE(s.heartbeat_forms());
    EXPECT_TRUE(s.Finish().ok());
  }
  EXPECT_EQ(
      Metric(R"(tracehealth_ingest_heartbeat_forms_total{result="rebuilt"})"),
      2);
  // The history: each report's own threads and latency.
  v1::GetHostHistoryRequest req;
  req.set_host_id("hb-1");
  *req.mutable_from() = google::protobuf::util::TimeUtil::SecondsToTimestamp(
      absl::ToUnixSeconds(kT0));
  *req.mutable_to() = google::protobuf::util::TimeUtil::SecondsToTimestamp(
      absl::ToUnixSeconds(kT0) + 3600);
  v1::GetHostHistoryResponse history;
  grpc::ClientContext ctx;
  ASSERT_TRUE(query_->GetHostHistory(&ctx, req, &history).ok());
  ASSERT_EQ(history.points_size(), 3);
  const v1::HostReport* sent[] = {&base, &r2, &r3};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(history.points(i).seq(), sent[i]->seq());
    EXPECT_EQ(history.points(i).threads(),
              sent[i]->snapshot().threads().total());
    EXPECT_EQ(history.points(i).attach_latency_seconds(),
              KprobeMultiReturnLatency(*sent[i]));
  }
  auto storage = StopAndOpen();
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(*storage->CountReports("hb-1"), 3);
  for (const v1::HostReport* r : {&r2, &r3}) {
    absl::StatusOr<std::string> blob = storage->GetReport("hb-1", r->seq());
    ASSERT_TRUE(blob.ok()) << blob.status();
    v1::HostReport got;
    ASSERT_TRUE(got.ParseFromString(*blob));
    const v1::HostReport want = Expected(base, HeartbeatFormOf(*r, 1));
    std::string diff;
    MessageDifferencer d;
    d.ReportDifferencesToString(&diff);
    EXPECT_TRUE(d.Compare(want, got)) << "seq " << r->seq() << ": " << diff;
  }
}

TEST_F(HeartbeatFormsTest, AFormOnABaseTheServerNeverHadStoresNothing) {
  Start();
  {
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(Report(5, 100000)));
    ASSERT_TRUE(s.WaitAcked(5));
    // Seq 4 was never sent: neither held nor stored.
    s.Send(HeartbeatFormOf(Report(6, 100000), 4));
    s.Send(Base(7, 100000));  // after it: not stored either
    ASSERT_TRUE(s.WaitClosed(absl::Seconds(20)));
    grpc::Status st = s.Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_TRUE(absl::StrContains(st.error_message(),
                                  "report seq 6 is in heartbeat form on seq 4"))
        << st.error_message();
    EXPECT_EQ(s.acked(), 5u);
  }
  EXPECT_EQ(
      Metric(R"(tracehealth_ingest_heartbeat_forms_total{result="no_base"})"),
      1);
  {
    // Sent whole again: stored, and a form on it is.
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(Base(6, 100000)));
    ASSERT_TRUE(s.Send(HeartbeatFormOf(Report(7, 100000), 6)));
    ASSERT_TRUE(s.WaitAcked(7));
    EXPECT_TRUE(s.Finish().ok());
  }
  auto storage = StopAndOpen();
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(*storage->CountReports("hb-1"), 3);
  // Any stored report of the host is a base a form may name, whether it
  // was marked or not (the material claim is the agent's).
}

TEST_F(HeartbeatFormsTest, ABaseNotInMemoryIsReadFromTheStore) {
  Start();
  {
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(Base(1, 100000)));
    ASSERT_TRUE(s.WaitAcked(1));
    EXPECT_TRUE(s.Finish().ok());
  }
  // A restarted server holds no base in memory.
  ASSERT_NE(StopAndOpen(), nullptr);
  Start();
  const v1::HostReport r2 = Report(2, 100400);
  {
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(HeartbeatFormOf(r2, 1)));
    ASSERT_TRUE(s.WaitAcked(2));
    // A replay of the form stores nothing twice.
    ASSERT_TRUE(s.Send(HeartbeatFormOf(r2, 1)));
    ASSERT_TRUE(s.Send(HeartbeatFormOf(Report(3, 100000), 1)));
    ASSERT_TRUE(s.WaitAcked(3));
    // Any stored report is a base once committed, one stored from a form
    // too (read from the store: 1 is the base held).
    ASSERT_TRUE(s.Send(HeartbeatFormOf(Report(4, 100000), 3)));
    ASSERT_TRUE(s.WaitAcked(4));
    ASSERT_TRUE(s.WaitAcked(3));
    EXPECT_TRUE(s.Finish().ok());
  }
  auto storage = StopAndOpen();
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(*storage->CountReports("hb-1"), 4);
  absl::StatusOr<std::string> blob = storage->GetReport("hb-1", 2);
  ASSERT_TRUE(blob.ok()) << blob.status();
  v1::HostReport got;
  ASSERT_TRUE(got.ParseFromString(*blob));
  EXPECT_TRUE(MessageDifferencer::Equals(
      got, Expected(Base(1, 100000), HeartbeatFormOf(r2, 1))));
}

TEST_F(HeartbeatFormsTest, OffByFlagAcksDoNotOfferAndAFormIsRefused) {
  Start({"--heartbeat_bases_mb=0"});
  ReportStream s(ingest_.get());
  ASSERT_TRUE(s.Send(Base(1, 100000)));
  ASSERT_TRUE(s.WaitAcked(1));
  EXPECT_FALSE(s.heartbeat_forms());
  s.Send(HeartbeatFormOf(Report(2, 100000), 1));
  ASSERT_TRUE(s.WaitClosed(absl::Seconds(20)));
  grpc::Status st = s.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(
      absl::StrContains(st.error_message(), "does not accept heartbeat forms"))
      << st.error_message();
}

}  // namespace
}  // namespace tracehealth::testing
