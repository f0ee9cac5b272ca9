// ReportBatches streams (ingest.proto) through the real server on a real
// SQLite file: a batch's reports are taken in order as if each had come on a
// Report stream (replays acked, an invalid one rejected by seq, another
// host's ending the stream after what came before it), and a message that is
// no batch of at most 256 reports ends the stream INVALID_ARGUMENT.

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/server/server_test_fixture.h"

namespace tracehealth::testing {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1790000000);

v1::HostReport Report(const std::string& host, uint64_t seq) {
  return server::SampleReport(Host(host, 20000 + seq), seq,
                              kT0 + absl::Seconds(15 * seq));
}

v1::ReportBatch Batch(const std::string& host, uint64_t first, uint64_t last) {
  v1::ReportBatch b;
  for (uint64_t s = first; s <= last; ++s) *b.add_reports() = Report(host, s);
  return b;
}

// One ReportBatches stream, its acks read on a thread of its own.
class BatchStream {
 public:
  explicit BatchStream(v1::TelemetryIngest::Stub* stub)
      : stream_(stub->ReportBatches(&ctx_)) {
    reader_ = std::thread([this] {
      v1::Ack ack;
      while (stream_->Read(&ack)) {
        absl::MutexLock lock(&mu_);
        acked_ = std::max(acked_, ack.acked_seq());
        offers_batches_ = offers_batches_ || ack.report_batches();
        for (const v1::Rejection& r : ack.rejected()) rejections_.push_back(r);
      }
      absl::MutexLock lock(&mu_);
      closed_ = true;
    });
  }
  ~BatchStream() {
    ctx_.TryCancel();
    if (reader_.joinable()) reader_.join();
  }
  bool Send(const v1::ReportBatch& b) { return stream_->Write(b); }
  bool WaitAcked(uint64_t seq) {
    absl::MutexLock lock(&mu_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return acked_ >= seq || closed_;
    };
    mu_.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(20));
    return acked_ >= seq;
  }
  // Waits for the server to end the stream; its status.
  grpc::Status Ended() {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&closed_), absl::Seconds(20));
    }
    return Finish();
  }
  grpc::Status Finish() {
    stream_->WritesDone();
    reader_.join();
    return stream_->Finish();
  }
  uint64_t acked() {
    absl::MutexLock lock(&mu_);
    return acked_;
  }
  bool offers_batches() {
    absl::MutexLock lock(&mu_);
    return offers_batches_;
  }
  std::vector<v1::Rejection> rejections() {
    absl::MutexLock lock(&mu_);
    return rejections_;
  }

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::ReportBatch, v1::Ack>> stream_;
  std::thread reader_;
  absl::Mutex mu_;
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  bool offers_batches_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<v1::Rejection> rejections_ ABSL_GUARDED_BY(mu_);
};

class ReportBatchesTest : public ServerTest {
 protected:
  // Stops the server; the reports stored of each host.
  std::vector<int64_t> StoredOf(const std::vector<std::string>& hosts) {
    std::unique_ptr<server::SqliteStorage> storage = StopAndOpen();
    std::vector<int64_t> out;
    for (const std::string& h : hosts) {
      out.push_back(storage != nullptr ? *storage->CountReports(h) : -1);
    }
    return out;
  }
};

TEST_F(ReportBatchesTest, ABatchIsStoredAsItsReportsInOrder) {
  Start();
  BatchStream s(ingest_.get());
  ASSERT_TRUE(s.Send(Batch("b-1", 1, 5)));
  ASSERT_TRUE(s.WaitAcked(5));
  EXPECT_TRUE(s.offers_batches());
  // 3 to 5 again: replays, acked and not stored twice.
  ASSERT_TRUE(s.Send(Batch("b-1", 3, 7)));
  ASSERT_TRUE(s.WaitAcked(7));
  // An empty batch is no report and no error.
  ASSERT_TRUE(s.Send(v1::ReportBatch()));
  ASSERT_TRUE(s.Send(Batch("b-1", 8, 8)));
  ASSERT_TRUE(s.WaitAcked(8));
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_EQ(StoredOf({"b-1"}), std::vector<int64_t>{8});
}

TEST_F(ReportBatchesTest, AnInvalidReportIsRejectedByItsSeqTheRestStored) {
  Start();
  BatchStream s(ingest_.get());
  v1::ReportBatch b = Batch("b-2", 1, 3);
  b.mutable_reports(1)->set_interval_seconds(0);  // seq 2: refused
  ASSERT_TRUE(s.Send(b));
  ASSERT_TRUE(s.WaitAcked(3));
  const std::vector<v1::Rejection> rej = s.rejections();
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(rej[0].seq(), 2u);
  EXPECT_EQ(rej[0].code(), 3);  // INVALID_ARGUMENT
  EXPECT_TRUE(absl::StrContains(rej[0].message(), "interval"))
      << rej[0].message();
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_EQ(StoredOf({"b-2"}), std::vector<int64_t>{2});
}

TEST_F(ReportBatchesTest, AnotherHostsReportEndsTheStreamAfterWhatCameFirst) {
  Start();
  BatchStream s(ingest_.get());
  v1::ReportBatch b = Batch("b-3", 1, 2);
  *b.add_reports() = Report("other", 1);
  *b.add_reports() = Report("b-3", 3);
  ASSERT_TRUE(s.Send(b));
  grpc::Status st = s.Ended();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(
      absl::StrContains(st.error_message(), "got a report for \"other\""))
      << st.error_message();
  EXPECT_EQ(s.acked(), 2u);
  EXPECT_EQ(StoredOf({"b-3", "other"}), (std::vector<int64_t>{2, 0}));
}

TEST_F(ReportBatchesTest, AMessageThatIsNoBatchEndsTheStream) {
  Start();
  {
    BatchStream s(ingest_.get());
    ASSERT_TRUE(s.Send(Batch("b-4", 1, 2)));
    ASSERT_TRUE(s.WaitAcked(2));
    v1::ReportBatch odd = Batch("b-4", 3, 3);
    odd.GetReflection()->MutableUnknownFields(&odd)->AddVarint(2, 1);
    s.Send(odd);
    grpc::Status st = s.Ended();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StrContains(
        st.error_message(),
        "message does not decode as a tracehealth.v1.ReportBatch (field 2 of "
        "wire type 0"))
        << st.error_message();
    EXPECT_EQ(s.acked(), 2u);
  }
  {
    // 256 reports are taken; 257 are not, none of them.
    BatchStream s(ingest_.get());
    ASSERT_TRUE(s.Send(Batch("b-4", 3, 258)));
    ASSERT_TRUE(s.WaitAcked(258));
    s.Send(Batch("b-4", 259, 515));
    grpc::Status st = s.Ended();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_TRUE(absl::StrContains(st.error_message(),
                                  "more than 256 reports in one batch"))
        << st.error_message();
    EXPECT_EQ(s.acked(), 258u);
  }
  EXPECT_EQ(StoredOf({"b-4"}), std::vector<int64_t>{258});
}

}  // namespace
}  // namespace tracehealth::testing
