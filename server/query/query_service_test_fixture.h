// The fixture of QueryService's tests (query_service_test,
// query_history_test, query_events_test): six sample hosts h0..h5 stored in
// a real SQLite file and applied to the index as the server does, h5 the
// worst and h0 received an hour ago; and stored events made to order.
#ifndef TRACEHEALTH_SERVER_QUERY_QUERY_SERVICE_TEST_FIXTURE_H_
#define TRACEHEALTH_SERVER_QUERY_QUERY_SERVICE_TEST_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/query/query_service.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {

class QueryServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStorage::Open(testing::NewTempDir("query") + "/q.db");
    ASSERT_TRUE(s.ok());
    storage_ = std::move(*s);
    now_ = absl::FromUnixSeconds(1800000000);
    // As the server has them: stored first, then in the index.
    std::vector<CommittedReport> reports;
    std::vector<ReportRow> rows;
    for (int i = 0; i < 6; ++i) {
      SampleHost h;
      h.host_id = "h" + std::to_string(i);
      h.threads = 10000 + 60000 * i;  // h5 is the worst
      h.role = i % 2 == 0 ? "db" : "web";
      const v1::HostReport r = SampleReport(h, 1, now_ - absl::Seconds(10));
      reports_[r.host_id()] = r;
      const absl::Time received = i == 0 ? now_ - absl::Hours(1) : now_;
      reports.push_back({StoredReport::Of(r), received});
      ReportRow row;
      row.host_id = r.host_id();
      row.seq = r.seq();
      row.received_at_ns = absl::ToUnixNanos(received);
      // observed_at_ns stays 0: outside every history window read below.
      row.blob = r.SerializeAsString();
      rows.push_back(std::move(row));
    }
    ASSERT_TRUE(storage_->WriteBatch(rows).ok());
    index_.Apply(reports);
    QueryOptions opts;
    opts.now = [this] { return now_; };
    opts.store = storage_.get();
    opts.events = storage_.get();
    service_ =
        std::make_unique<QueryService>(&index_, storage_.get(), nullptr, opts);
  }

  absl::Time now_;
  std::map<std::string, v1::HostReport> reports_;  // as sent
  std::unique_ptr<SqliteStorage> storage_;
  HostIndex index_;
  std::unique_ptr<QueryService> service_;
};

// A stored event of `host`, kmsg seq `seq`, logged `ago_s` seconds ago.
inline EventRow StoredEventRow(const std::string& host, uint64_t seq,
                               int64_t ago_s, v1::EventPrediction predicted,
                               absl::Time now) {
  v1::StoredEvent e;
  e.set_host_id(host);
  e.mutable_event()->set_boot_id("b");
  e.mutable_event()->set_kmsg_seq(seq);
  e.mutable_event()->set_kind(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  *e.mutable_event()->mutable_logged_at() =
      google::protobuf::util::TimeUtil::SecondsToTimestamp(
          absl::ToUnixSeconds(now) - ago_s);
  e.set_predicted(predicted);
  EventRow row;
  row.host_id = host;
  row.boot_id = "b";
  row.kmsg_seq = seq;
  row.logged_at_ns = absl::ToUnixNanos(now - absl::Seconds(ago_s));
  row.kind = e.event().kind();
  row.predicted = predicted;
  row.blob = e.SerializeAsString();
  return row;
}

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_QUERY_SERVICE_TEST_FIXTURE_H_
