// The streamer's ReportBatches streams against a recording server: a
// backlog goes several reports a message once the server offers them, up to
// the window and max_batch_reports; heartbeat forms inside batches; a server
// that offers and then has no such method.
#include <cstdint>
#include <string>
#include <utility>
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

class StreamerBatchTest : public StreamerFixture {
 protected:
  // Appends seqs [a, b] (the streamer sees them all at its next wake),
  // waits until every one is acked and the stream that sent them has ended
  // (`ended`: the streams ended on the server's side by then, in all), so
  // that the next backlog starts a stream of its own.
  void Backlog(uint64_t a, uint64_t b, int ended) {
    for (uint64_t s = a; s <= b; ++s) {
      ASSERT_TRUE(spool_->Append(s, SteadyReport(s)).ok());
    }
    streamer_->Wake();
    ASSERT_TRUE(streamer_->Flush(absl::Seconds(30)));
    ASSERT_TRUE(service_.WaitEnded(ended));
  }
  // Starts the streamer on a spool that already holds `seq` and waits as
  // Backlog does. The streamer takes a record it finds on start without a
  // Wake; a Wake after that stream had decided to close would start the next
  // backlog's stream while that backlog is still being appended.
  void StartWith(StreamerOptions o, uint64_t seq, int ended) {
    ASSERT_TRUE(spool_->Append(seq, SteadyReport(seq)).ok());
    Start(std::move(o));
    ASSERT_TRUE(streamer_->Flush(absl::Seconds(30)));
    ASSERT_TRUE(service_.WaitEnded(ended));
  }
};

TEST_F(StreamerBatchTest, ABacklogGoesInBatchesOfTheWindowOnceOffered) {
  service_.OfferBatches();
  // Window 64, batches of up to 64; one a message until an ack offers them.
  StartWith(Options(port_), 1, 1);
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
  StartWith(o, 1, 1);
  Backlog(2, 26, 2);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 10, 10, 5}));
  EXPECT_EQ(service_.stored(), Range(1, 26));
}

TEST_F(StreamerBatchTest, OneAMessageWithoutTheOfferOrWithBatchesOff) {
  StartWith(Options(port_), 1, 1);
  Backlog(2, 5, 2);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(service_.stored(), Range(1, 5));
  streamer_->Stop();
  streamer_.reset();

  service_.OfferBatches();
  StreamerOptions o = Options(port_);
  o.max_batch_reports = 1;
  StartWith(o, 6, 3);
  Backlog(7, 9, 4);
  EXPECT_EQ(service_.batches(), (std::vector<int>{1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(service_.stored(), Range(1, 9));
}

TEST_F(StreamerBatchTest, HeartbeatFormsInsideBatches) {
  service_.OfferBatches();
  service_.OfferHeartbeatForms();
  StartWith(Options(port_), 1, 1);
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
  StartWith(o, 1, 1);
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
