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

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);

// Report `seq` of a steady host, 15 s after the previous one; `threads`
// 20 % more is a material change.
std::string Steady(uint64_t seq, uint64_t threads = 100000) {
  server::SampleHost h;
  h.host_id = "web-1";
  h.threads = threads;
  return server::SampleReport(h, seq, kT0 + absl::Seconds(15 * seq))
      .SerializeAsString();
}

class StreamerHeartbeatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = Serve(&service_, &port_);
    ASSERT_GT(port_, 0);
    auto spool = Spool::Open(TestTempDir("streamer-hb"), 8 << 20);
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
  // Appends `wire` as `seq` and waits until it is acked.
  void Send(uint64_t seq, const std::string& wire) {
    ASSERT_TRUE(spool_->Append(seq, wire).ok());
    streamer_->Wake();
    ASSERT_TRUE(streamer_->Flush(absl::Seconds(20)));
  }

  RecordingIngest service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Streamer> streamer_;
};

TEST_F(StreamerHeartbeatTest, WholeUntilTheServerOffersThenFormsOnTheBase) {
  service_.OfferHeartbeatForms();
  Start(Options(port_));
  for (uint64_t s = 1; s <= 4; ++s) Send(s, Steady(s));
  // 1 before any ack; 2 whole as the base; 3 and 4 on it.
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, 0, 2, 2}));
  EXPECT_EQ(streamer_->heartbeat_forms(), 2u);
  // A material change goes whole and is the next base.
  Send(5, Steady(5, 120000));
  Send(6, Steady(6, 120000));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, 0, 2, 2, 0, 5}));
  EXPECT_EQ(service_.stored(), Range(1, 6));
  EXPECT_EQ(streamer_->connects(), 1u);
}

TEST_F(StreamerHeartbeatTest, AServerThatDoesNotOfferGetsEverythingWhole) {
  Start(Options(port_));
  for (uint64_t s = 1; s <= 4; ++s) Send(s, Steady(s));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, -1, -1, -1}));
  EXPECT_EQ(streamer_->heartbeat_forms(), 0u);
}

TEST_F(StreamerHeartbeatTest, ZeroIntervalSendsEverythingWhole) {
  service_.OfferHeartbeatForms();
  StreamerOptions o = Options(port_);
  o.whole_report_interval = absl::ZeroDuration();
  Start(o);
  for (uint64_t s = 1; s <= 3; ++s) Send(s, Steady(s));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, -1, -1}));
}

TEST_F(StreamerHeartbeatTest, NoBaseSendsItWholeAtOnceOnTheSameConnection) {
  service_.OfferHeartbeatForms();
  StreamerOptions o = Options(port_);
  std::vector<absl::Duration> delays;
  o.on_backoff = [&delays](absl::Duration d) { delays.push_back(d); };
  Start(o);
  for (uint64_t s = 1; s <= 3; ++s) Send(s, Steady(s));
  service_.NoBaseAt(4);
  Send(4, Steady(4));
  Send(5, Steady(5));
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
  for (uint64_t s = 1; s <= 3; ++s) Send(s, Steady(s));
  // 4 is stored and the stream breaks before its ack: the replay of 4 on a
  // new connection (a duplicate) goes whole, before that server has offered
  // forms again, and 5 is the base once it has.
  service_.BreakAfterStoring(4);
  Send(4, Steady(4));
  Send(5, Steady(5));
  Send(6, Steady(6));
  EXPECT_EQ(service_.forms(), (std::vector<int64_t>{-1, 0, 2, 2, -1, 0, 5}));
  EXPECT_EQ(service_.stored(), Range(1, 6));
  EXPECT_EQ(streamer_->connects(), 2u);
}

}  // namespace
}  // namespace tracehealth::agent
