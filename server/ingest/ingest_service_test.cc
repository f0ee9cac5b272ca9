#include "server/ingest/ingest_service.h"

#include <atomic>
#include <memory>
#include <string>

#include "absl/synchronization/notification.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/storage/controlled_report_store.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

class IngestServiceTest : public ::testing::Test {
 protected:
  void Start(size_t queue_capacity) {
    auto s = SqliteStorage::Open(testing::NewTempDir("ingest") + "/i.db");
    ASSERT_TRUE(s.ok()) << s.status();
    sqlite_ = std::move(*s);
    storage_ = std::make_unique<ControlledReportStore>(sqlite_.get());
    storage_->fail_ = fail_;
    storage_->hold_ = hold_;
    ReportWriter::Options wopts;
    wopts.queue_capacity = queue_capacity;
    writer_ = std::make_unique<ReportWriter>(storage_.get(), wopts, nullptr);
    service_ = std::make_unique<IngestService>(writer_.get(), &metrics_,
                                               IngestOptions());
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(service_.get());
    server_ = b.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::TelemetryIngest::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                            grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (storage_ != nullptr && !storage_->release_.HasBeenNotified()) {
      storage_->release_.Notify();
    }
    if (service_ != nullptr) service_->BeginShutdown();
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(5));
    }
    if (writer_ != nullptr) writer_->Stop();
  }

  bool fail_ = false;
  bool hold_ = false;
  std::unique_ptr<SqliteStorage> sqlite_;
  std::unique_ptr<ControlledReportStore> storage_;
  ServerMetrics metrics_;
  std::unique_ptr<ReportWriter> writer_;
  std::unique_ptr<IngestService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::TelemetryIngest::Stub> stub_;
};

TEST_F(IngestServiceTest, FailedWriteEndsTheStreamOfAClientWaitingForItsAck) {
  fail_ = true;
  Start(16);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = stub_->Report(&ctx);
  // One report, then wait: no more writes, no half-close.
  ASSERT_TRUE(stream->Write(SampleReport({"h1"}, 1, absl::Now())));
  v1::Ack ack;
  EXPECT_FALSE(stream->Read(&ack));  // the server ended the stream
  grpc::Status st = stream->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE)
      << st.error_message();
  EXPECT_NE(st.error_message().find("disk is full"), std::string::npos)
      << st.error_message();
}

TEST_F(IngestServiceTest, AFullWriterQueuePausesReadingWithoutLosingReports) {
  hold_ = true;
  Start(4);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub_->Report(&ctx);
  const uint64_t n = 40;
  for (uint64_t seq = 1; seq <= n; ++seq) {
    ASSERT_TRUE(stream->Write(SampleReport({"h1"}, seq, absl::Now())));
  }
  // The writer holds its first batch; the stream stops reading once the
  // queue is full: what the server took in stays bounded (the held batch
  // plus a queue of capacity + one per stream), the rest waits in the
  // client and the transport.
  absl::SleepFor(absl::Milliseconds(300));
  const size_t taken = storage_->held_rows_ + writer_->queue_depth();
  EXPECT_GE(taken, 4u);
  EXPECT_LE(taken, 9u);
  storage_->release_.Notify();
  v1::Ack ack;
  uint64_t acked = 0;
  while (acked < n && stream->Read(&ack)) acked = ack.acked_seq();
  EXPECT_EQ(acked, n);
  stream->WritesDone();
  grpc::Status st = stream->Finish();
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(*sqlite_->CountReports("h1"), static_cast<int64_t>(n));
}

}  // namespace
}  // namespace tracehealth::server
