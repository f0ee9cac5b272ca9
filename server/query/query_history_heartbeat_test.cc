// GetHostHistory answers the same whether the reports were stored whole or
// as heartbeats (server/storage/heartbeat_policy.h), for the same reports.
#include <memory>
#include <string>
#include <vector>

#include "common/report/material.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/ingest/report_row.h"
#include "server/query/query_service.h"
#include "server/report/report_head.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::MessageDifferencer;
using google::protobuf::util::TimeUtil;

const absl::Time kStart = absl::FromUnixSeconds(1800000000);

// 120 reports 15 s apart: threads wander by up to 2 %, the kernel changes at
// seq 50, the thread count jumps (the risk with it) at seq 90.
std::vector<v1::HostReport> Reports() {
  std::vector<v1::HostReport> out;
  for (uint64_t seq = 1; seq <= 120; ++seq) {
    SampleHost h;
    h.host_id = "h";
    h.threads = (seq >= 90 ? 900000 : 50000) + (seq * 37) % 1000;
    h.kernel_release = seq >= 50 ? "6.17.2" : "6.16.3";
    out.push_back(SampleReport(
        h, seq,
        kStart + absl::Seconds(15 * seq) + absl::Microseconds(seq * 7)));
  }
  return out;
}

struct Served {
  std::string path;
  std::unique_ptr<SqliteStorage> store;
  HostIndex index;
  std::unique_ptr<QueryService> service;
  int64_t full_rows = 0;
};

void Serve(absl::Duration interval, Served& s) {
  SqliteOptions opts;
  opts.full_report_interval = interval;
  s.path = testing::NewTempDir("hist") + "/h.db";
  auto st = SqliteStorage::Open(s.path, opts);
  ASSERT_TRUE(st.ok()) << st.status();
  s.store = std::move(*st);
  for (const v1::HostReport& r : Reports()) {
    const std::string blob = r.SerializeAsString();
    const absl::Time received =
        kStart + absl::Seconds(15 * r.seq()) + absl::Milliseconds(3);
    ReportRow row = MakeReportRow(*DecodeReportHead(blob), blob, received);
    ASSERT_TRUE(s.store->WriteBatch({row}).ok());
    s.index.Apply({CommittedReport{StoredReport::Of(r), received}});
  }
  QueryOptions q;
  q.now = [] { return kStart + absl::Hours(1); };
  q.store = s.store.get();
  s.service =
      std::make_unique<QueryService>(&s.index, s.store.get(), nullptr, q);
}

v1::GetHostHistoryResponse History(Served& s, v1::ProbeKind kind,
                                   uint32_t max_points) {
  v1::GetHostHistoryRequest req;
  req.set_host_id("h");
  req.set_probe_kind(kind);
  req.set_max_points(max_points);
  *req.mutable_from() = TimeUtil::NanosecondsToTimestamp(
      absl::ToUnixNanos(kStart + absl::Seconds(100)));
  v1::GetHostHistoryResponse resp;
  grpc::Status st = s.service->DoGetHostHistory(req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return resp;
}

TEST(QueryHistoryTest, SameAnswersWithAndWithoutHeartbeats) {
  Served whole, beats;
  Serve(absl::ZeroDuration(), whole);
  Serve(absl::Hours(6), beats);
  // The heartbeats did fold reports: whole are only seq 1, the kernel
  // change (50) and the thread jump (90).
  EXPECT_EQ(*whole.store->CountReports("h"), 120);
  EXPECT_EQ(*beats.store->CountReports("h"), 120);
  EXPECT_EQ(SqlInt(whole.path, "SELECT count(*) FROM reports"), 120);
  EXPECT_EQ(SqlInt(beats.path, "SELECT count(*) FROM reports"), 3);
  EXPECT_EQ(SqlInt(beats.path, "SELECT sum(seq) FROM reports"), 1 + 50 + 90);
  for (uint32_t points : {500u, 7u}) {
    SCOPED_TRACE(points);
    const v1::GetHostHistoryResponse a =
        History(whole, v1::PROBE_KIND_KPROBE_MULTI_RETURN, points);
    const v1::GetHostHistoryResponse b =
        History(beats, v1::PROBE_KIND_KPROBE_MULTI_RETURN, points);
    EXPECT_EQ(a.matched_reports(), 114u);  // seqs 7..120
    EXPECT_TRUE(MessageDifferencer::Equals(a, b))
        << a.DebugString().substr(0, 600) << "\nvs\n"
        << b.DebugString().substr(0, 600);
  }
  // Another probe kind: its latency is the full report's, within the
  // tolerance; everything else equal.
  const v1::GetHostHistoryResponse a =
      History(whole, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 500);
  const v1::GetHostHistoryResponse b =
      History(beats, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 500);
  ASSERT_EQ(a.points_size(), b.points_size());
  for (int i = 0; i < a.points_size(); ++i) {
    v1::HistoryPoint pa = a.points(i), pb = b.points(i);
    EXPECT_NEAR(pb.attach_latency_seconds(), pa.attach_latency_seconds(),
                kMaterialTolerance * pa.attach_latency_seconds());
    pa.clear_attach_latency_seconds();
    pb.clear_attach_latency_seconds();
    EXPECT_TRUE(MessageDifferencer::Equals(pa, pb)) << i;
  }
}

}  // namespace
}  // namespace tracehealth::server
