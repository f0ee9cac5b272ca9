// The streamer's heartbeat forms against a recording server: when it sends
// them, on what base, and what a missing base or a broken stream does.
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

class StreamerHeartbeatTest : public StreamerFixture {
 protected:
  // Appends `wire` as `seq` and waits until it is acked.
  void Send(uint64_t seq, const std::string& wire) {
    ASSERT_TRUE(spool_->Append(seq, wire).ok());
    streamer_->Wake();
    ASSERT_TRUE(streamer_->Flush(absl::Seconds(20)));
  }
};

TEST_F(StreamerHeartbeatTest, WholeUntilTheServerOffersThenFormsOnTheBase) {
  service_.OfferHeartbeatForms();
  Start(Options(port_));
  for (uint64_t s = 1; s <= 4; ++s) Send(s, SteadyReport(s));
  // 1 before any ack; 2 whole as the base; 3 and 4 on it.
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, 0, 2, 2}));
  EXPECT_EQ(streamer_->heartbeat_forms(), 2u);
  // A material change goes whole and is the next base.
  Send(5, SteadyReport(5, 120000));
  Send(6, SteadyReport(6, 120000));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, 0, 2, 2, 0, 5}));
  EXPECT_EQ(service_.stored(), Range(1, 6));
  EXPECT_EQ(streamer_->connects(), 1u);
}

TEST_F(StreamerHeartbeatTest, AServerThatDoesNotOfferGetsEverythingWhole) {
  Start(Options(port_));
  for (uint64_t s = 1; s <= 4; ++s) Send(s, SteadyReport(s));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, -1, -1, -1}));
  EXPECT_EQ(streamer_->heartbeat_forms(), 0u);
}

TEST_F(StreamerHeartbeatTest, ZeroIntervalSendsEverythingWhole) {
  service_.OfferHeartbeatForms();
  StreamerOptions o = Options(port_);
  o.whole_report_interval = absl::ZeroDuration();
  Start(o);
  for (uint64_t s = 1; s <= 3; ++s) Send(s, SteadyReport(s));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, -1, -1}));
}

TEST_F(StreamerHeartbeatTest, NoBaseSendsItWholeAtOnceOnTheSameConnection) {
  service_.OfferHeartbeatForms();
  StreamerOptions o = Options(port_);
  std::vector<absl::Duration> delays;
  o.on_backoff = [&delays](absl::Duration d) { delays.push_back(d); };
  Start(o);
  for (uint64_t s = 1; s <= 3; ++s) Send(s, SteadyReport(s));
  service_.NoBaseAt(4);
  Send(4, SteadyReport(4));
  Send(5, SteadyReport(5));
  // 4 in form on 2, refused; again whole as the base; 5 on it.
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, 0, 2, 2, 0, 4}));
  EXPECT_EQ(service_.stored(), Range(1, 5));
  EXPECT_EQ(streamer_->connects(), 1u);
  EXPECT_TRUE(delays.empty());
  EXPECT_EQ(streamer_->Health().last_acked_seq(), 5u);
}

TEST_F(StreamerHeartbeatTest, ABrokenStreamSendsTheReplayWhole) {
  service_.OfferHeartbeatForms();
  Start(Options(port_));
  for (uint64_t s = 1; s <= 3; ++s) Send(s, SteadyReport(s));
  // 4 is stored and the stream breaks before its ack: the replay of 4 on a
  // new connection (a duplicate) goes whole, before that server has offered
  // forms again, and 5 is the base once it has.
  service_.BreakAfterStoring(4);
  Send(4, SteadyReport(4));
  Send(5, SteadyReport(5));
  Send(6, SteadyReport(6));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, 0, 2, 2, -1, 0, 5}));
  EXPECT_EQ(service_.stored(), Range(1, 6));
  EXPECT_EQ(streamer_->connects(), 2u);
}

}  // namespace
}  // namespace tracehealth::agent
