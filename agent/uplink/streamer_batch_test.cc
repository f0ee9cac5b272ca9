// The streamer's ReportBatches streams against a recording server: a
// backlog goes several reports a message once the server offers them, up to
// the window and max_batch_reports; heartbeat forms inside batches; a server
// that offers and then has no such method.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/testing/test_tmp.h"
#include "agent/uplink/recording_ingest.h"
#include "agent/uplink/spool.h"
#include "agent/uplink/streamer.h"
#include "gtest/gtest.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);

// Report `seq` of a steady host (the same material content every time).
std::string Steady(uint64_t seq) {
  server::SampleHost h;
  h.host_id = "web-1";
  h.threads = 100000;
  return server::SampleReport(h, seq, kT0 + absl::Seconds(15 * seq))
      .SerializeAsString();
}

class StreamerBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = Serve(&service_, &port_);
    ASSERT_GT(port_, 0);
    auto spool = Spool::Open(TestTempDir("streamer-batch"), 64 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    spool_ = std::move(*spool);
  }
  void TearDown() override {
    if (streamer_ != nullptr) streamer_->Stop();
    ShutdownNow(server_.get());
  }
  void Start(StreamerOptions o) {
    auto s = Streamer::Create(std::move(o), spool_.get());
    ASSERT_TRUE(s.ok()) << s.status();
    streamer_ = std::move(*s);
    streamer_->Start();
  }
  // Appends seqs [a, b] (the streamer sees them all at its next wake),
  // waits until every one is acked and the stream that sent them has ended
  // (`ended`: the streams ended on the server's side by then, in all), so
  // that the next backlog starts a stream of its own.
  void Backlog(uint64_t a, uint64_t b, int ended) {
    for (uint64_t s = a; s <= b; ++s) {
      ASSERT_TRUE(spool_->Append(s, Steady(s)).ok());
    }
    streamer_->Wake();
    ASSERT_TRUE(streamer_->Flush(absl::Seconds(30)));
    ASSERT_TRUE(service_.WaitEnded(ended));
  }

  RecordingIngest service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Streamer> streamer_;
};

TEST_F(StreamerBatchTest, ABacklogGoesInBatchesOfTheWindowOnceOffered) {
  service_.OfferBatches();
  Start(Options(port_));  // window 64, batches of up to 64
  Backlog(1, 1, 1);       // one a message until an ack offers batches
  Backlog(2, 101, 2);
  // 64 fill the window; the other 36 once they are acked.
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 64, 36}));
  EXPECT_EQ(service_.stored(), Range(1, 101));
  EXPECT_EQ(streamer_->connects(), 1u);
  EXPECT_EQ(streamer_->Health().last_acked_seq(), 101u);
}

TEST_F(StreamerBatchTest, AtMostMaxBatchReports) {
  service_.OfferBatches();
  StreamerOptions o = Options(port_);
  o.max_batch_reports = 10;
  Start(o);
  Backlog(1, 1, 1);
  Backlog(2, 26, 2);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 10, 10, 5}));
  EXPECT_EQ(service_.stored(), Range(1, 26));
}

TEST_F(StreamerBatchTest, OneAMessageWithoutTheOfferOrWithBatchesOff) {
  Start(Options(port_));
  Backlog(1, 1, 1);
  Backlog(2, 5, 2);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(service_.stored(), Range(1, 5));
  streamer_->Stop();
  streamer_.reset();

  service_.OfferBatches();
  StreamerOptions o = Options(port_);
  o.max_batch_reports = 1;
  Start(o);
  Backlog(6, 6, 3);
  Backlog(7, 9, 4);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(service_.stored(), Range(1, 9));
}

TEST_F(StreamerBatchTest, HeartbeatFormsInsideBatches) {
  service_.OfferBatches();
  service_.OfferHeartbeatForms();
  Start(Options(port_));
  Backlog(1, 1, 1);
  Backlog(2, 2, 2);  // whole, the base
  Backlog(3, 10, 3);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 1, 8}));
  EXPECT_EQ(service_.forms(),
            (std::vector<int64_t>{-1, 0, 2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(service_.stored(), Range(1, 10));
}

TEST_F(StreamerBatchTest, AnOfferWithoutTheMethodFallsBackAtOnce) {
  service_.OfferBatchesWithout();
  StreamerOptions o = Options(port_);
  std::vector<absl::Duration> delays;
  o.on_backoff = [&delays](absl::Duration d) { delays.push_back(d); };
  Start(o);
  Backlog(1, 1, 1);
  Backlog(2, 5, 3);  // the refused stream ends too
  // The batched stream ended UNIMPLEMENTED before it took a report; the
  // backlog then went one a message, on the same connection, without
  // backoff.
  EXPECT_EQ(service_.unimplemented(), 1);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(service_.stored(), Range(1, 5));
  EXPECT_EQ(streamer_->connects(), 1u);
  EXPECT_TRUE(delays.empty());
  // The connection's later acks still offer them: not taken up again.
  Backlog(6, 8, 4);
  EXPECT_EQ(service_.unimplemented(), 1);
  EXPECT_EQ(service_.stored(), Range(1, 8));
}

}  // namespace
}  // namespace tracehealth::agent
