#include "agent/uplink/streamer.h"

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "agent/testing/test_tmp.h"
#include "agent/uplink/recording_ingest.h"
#include "agent/uplink/spool.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"

namespace tracehealth::agent {
namespace {

TEST(StreamerTest, DeliversInOrderAndAcksEmptyTheSpool) {
  RecordingIngest service;
  int port = 0;
  auto server = Serve(&service, &port);
  ASSERT_GT(port, 0);
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  for (uint64_t s = 1; s <= 20; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
  }
  auto streamer = Streamer::Create(Options(port), spool->get());
  ASSERT_TRUE(streamer.ok()) << streamer.status();
  (*streamer)->Start();
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  for (uint64_t s = 21; s <= 25; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
    (*streamer)->Wake();
  }
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  EXPECT_EQ(service.stored(), Range(1, 25));
  EXPECT_EQ((*spool)->depth(), 0u);
  v1::AgentHealth h = (*streamer)->Health();
  EXPECT_EQ(h.last_acked_seq(), 25u);
  EXPECT_TRUE(h.has_last_ack_at());
  EXPECT_EQ(h.spool_depth(), 0u);
  EXPECT_EQ((*streamer)->connects(), 1u);
  (*streamer)->Stop();
  ShutdownNow(server.get());
}

TEST(StreamerTest, RejectedReportsAreDroppedAndCounted) {
  RecordingIngest service;
  service.Reject(3);
  service.Reject(4);
  int port = 0;
  auto server = Serve(&service, &port);
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  for (uint64_t s = 1; s <= 6; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
  }
  auto streamer = Streamer::Create(Options(port), spool->get());
  (*streamer)->Start();
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  EXPECT_EQ(service.stored(), (std::vector<uint64_t>{1, 2, 5, 6}));
  EXPECT_EQ((*streamer)->Health().rejected_total(), 2u);
  EXPECT_EQ((*spool)->depth(), 0u);
  (*streamer)->Stop();
  ShutdownNow(server.get());
}

TEST(StreamerTest, BacksOffWhileDownThenReplaysExactlyOnceInOrder) {
  // A port with nothing listening.
  RecordingIngest service;
  int port = 0;
  ShutdownNow(Serve(&service, &port).get());
  ASSERT_GT(port, 0);

  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  for (uint64_t s = 1; s <= 5; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
  }
  absl::Mutex mu;
  std::vector<absl::Duration> delays;
  StreamerOptions o = Options(port);
  o.on_backoff = [&](absl::Duration d) {
    absl::MutexLock lock(&mu);
    delays.push_back(d);
  };
  auto streamer = Streamer::Create(o, spool->get());
  (*streamer)->Start();
  {
    absl::MutexLock lock(&mu);
    auto enough = [&] { return delays.size() >= 6; };
    ASSERT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(30)));
    // Exponential from 20 ms, doubling, capped at 160 ms.
    EXPECT_EQ(delays[0], absl::Milliseconds(20));
    EXPECT_EQ(delays[1], absl::Milliseconds(40));
    EXPECT_EQ(delays[2], absl::Milliseconds(80));
    EXPECT_EQ(delays[3], absl::Milliseconds(160));
    EXPECT_EQ(delays[5], absl::Milliseconds(160));
  }
  EXPECT_EQ((*spool)->depth(), 5u);  // nothing lost while down

  auto server = Serve(&service, &port);
  ASSERT_TRUE(server != nullptr);
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  EXPECT_EQ(service.stored(), Range(1, 5));

  // The server goes away with reports in flight and comes back.
  ShutdownNow(server.get());
  server.reset();
  for (uint64_t s = 6; s <= 12; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
    (*streamer)->Wake();
  }
  EXPECT_FALSE((*streamer)->Flush(absl::Milliseconds(300)));
  server = Serve(&service, &port);
  ASSERT_TRUE(server != nullptr);
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  EXPECT_EQ(service.stored(), Range(1, 12));
  EXPECT_GE((*streamer)->connects(), 3u);
  (*streamer)->Stop();
  ShutdownNow(server.get());
}

TEST(StreamerTest, EndsTheStreamOnceAckedAndSendsTheNextOnTheSameConnection) {
  RecordingIngest service;
  int port = 0;
  auto server = Serve(&service, &port);
  ASSERT_GT(port, 0);
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  ASSERT_TRUE((*spool)->Append(1, ReportBytes(1)).ok());
  StreamerOptions o = Options(port);
  Delays delays(&o);
  auto streamer = Streamer::Create(o, spool->get());
  ASSERT_TRUE(streamer.ok()) << streamer.status();
  ::testing::internal::CaptureStderr();
  (*streamer)->Start();
  // Report 1 acked: the agent half-closes, the server sees the stream end.
  ASSERT_TRUE(service.WaitEnded(1));
  EXPECT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  EXPECT_EQ((*streamer)->Health().last_acked_seq(), 1u);
  // Idle: no stream is open and none is opened.
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(service.peers().size(), 1u);
  EXPECT_EQ((*streamer)->streams(), 1u);

  ASSERT_TRUE((*spool)->Append(2, ReportBytes(2)).ok());
  (*streamer)->Wake();
  ASSERT_TRUE(service.WaitEnded(2));
  EXPECT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(service.stored(), Range(1, 2));
  EXPECT_EQ(service.received(), 2u);  // nothing sent twice
  // A new stream over the same connection: the same client address and
  // port (ipv4:127.0.0.1:PORT), and no new channel.
  std::vector<std::string> peers = service.peers();
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0], peers[1]);
  EXPECT_EQ(peers[0].rfind("ipv4:127.0.0.1:", 0), 0u) << peers[0];
  EXPECT_EQ((*streamer)->streams(), 2u);
  EXPECT_EQ((*streamer)->connects(), 1u);
  // A clean end is no failure: nothing logged, no backoff.
  EXPECT_EQ(log.find("tracehealth-agent"), std::string::npos) << log;
  EXPECT_TRUE(delays.get().empty());
  (*streamer)->Stop();
  ShutdownNow(server.get());
}

TEST(StreamerTest, ReplaysOnAFreshConnectionAfterABrokenStream) {
  RecordingIngest service;
  // Stores 3 and ends the stream before acking it (4 and 5 were written
  // but not read).
  service.BreakAfterStoring(3);
  int port = 0;
  auto server = Serve(&service, &port);
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  for (uint64_t s = 1; s <= 5; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
  }
  StreamerOptions o = Options(port);
  Delays delays(&o);
  auto streamer = Streamer::Create(o, spool->get());
  ::testing::internal::CaptureStderr();
  (*streamer)->Start();
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  ASSERT_TRUE(service.WaitEnded(2));
  const std::string log = ::testing::internal::GetCapturedStderr();
  // 3 is replayed and acked as already stored: each stored exactly once.
  EXPECT_EQ(service.stored(), Range(1, 5));
  EXPECT_EQ((*streamer)->Health().last_acked_seq(), 5u);
  // The failure is logged; a fresh channel (another client port) follows
  // at once, without backoff, since the broken stream had acks.
  EXPECT_NE(log.find("ended: UNAVAILABLE: broken for the test; reconnecting "
                     "with backoff"),
            std::string::npos)
      << log;
  EXPECT_EQ((*streamer)->connects(), 2u);
  std::vector<std::string> peers = service.peers();
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_NE(peers[0], peers[1]);
  EXPECT_TRUE(delays.get().empty());
  (*streamer)->Stop();
  ShutdownNow(server.get());
}

TEST(StreamerTest, BacksOffWhenStreamsAreRefused) {
  RecordingIngest service;
  service.Refuse(3);
  int port = 0;
  auto server = Serve(&service, &port);
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  ASSERT_TRUE((*spool)->Append(1, ReportBytes(1)).ok());
  StreamerOptions o = Options(port);
  Delays delays(&o);
  auto streamer = Streamer::Create(o, spool->get());
  ::testing::internal::CaptureStderr();
  (*streamer)->Start();
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  ASSERT_TRUE(service.WaitEnded(4));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(service.stored(), Range(1, 1));
  // One address: each refusal is a failed round; 20 ms doubling.
  EXPECT_EQ(delays.get(), (std::vector<absl::Duration>{
                              absl::Milliseconds(20), absl::Milliseconds(40),
                              absl::Milliseconds(80)}));
  // Logged once, not once per retry.
  const std::string line =
      "ended: RESOURCE_EXHAUSTED: full for the test; reconnecting with "
      "backoff";
  ASSERT_NE(log.find(line), std::string::npos) << log;
  EXPECT_EQ(log.find(line, log.find(line) + 1), std::string::npos) << log;
  // Each refusal dropped its connection: four streams from four ports.
  EXPECT_EQ((*streamer)->connects(), 4u);
  std::vector<std::string> peers = service.peers();
  EXPECT_EQ(std::set<std::string>(peers.begin(), peers.end()).size(), 4u);
  (*streamer)->Stop();
  ShutdownNow(server.get());
}

TEST(StreamerTest, RequiresAServerAndReadableTlsFiles) {
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  EXPECT_FALSE(Streamer::Create(StreamerOptions(), spool->get()).ok());
  StreamerOptions o = Options(1);
  o.tls_ca = "/nonexistent/ca.pem";
  auto s = Streamer::Create(o, spool->get());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--tls_ca"), std::string::npos);
}

TEST(StreamerTest, MovesToTheNextServerWhenOneGoesAway) {
  // Two replicas sharing what they stored (one database), as
  // "a:PORT,b:PORT".
  RecordingIngest service;
  int port_a = 0, port_b = 0;
  auto a = Serve(&service, &port_a);
  auto b = Serve(&service, &port_b);
  ASSERT_GT(port_a, 0);
  ASSERT_GT(port_b, 0);
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  for (uint64_t s = 1; s <= 5; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
  }
  absl::Mutex mu;
  std::vector<absl::Duration> delays;
  StreamerOptions o = Options(port_a);
  o.server = absl::StrCat("127.0.0.1:", port_a, ",127.0.0.1:", port_b);
  o.on_backoff = [&](absl::Duration d) {
    absl::MutexLock lock(&mu);
    delays.push_back(d);
  };
  auto streamer = Streamer::Create(o, spool->get());
  ASSERT_TRUE(streamer.ok()) << streamer.status();
  (*streamer)->Start();
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  EXPECT_EQ((*streamer)->connects(), 1u);
  // The first replica dies: the next stream goes to the second one at once
  // (no backoff: it had not failed yet) and nothing is lost or doubled.
  ShutdownNow(a.get());
  a.reset();
  for (uint64_t s = 6; s <= 10; ++s) {
    ASSERT_TRUE((*spool)->Append(s, ReportBytes(s)).ok());
    (*streamer)->Wake();
  }
  ASSERT_TRUE((*streamer)->Flush(absl::Seconds(20)));
  EXPECT_EQ(service.stored(), Range(1, 10));
  EXPECT_EQ((*streamer)->connects(), 2u);
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(delays.empty());
  }
  // Both gone: the next report finds b's connection gone, a fails too: a
  // round over both addresses, then the backoff.
  ShutdownNow(b.get());
  b.reset();
  ASSERT_TRUE((*spool)->Append(11, ReportBytes(11)).ok());
  (*streamer)->Wake();
  {
    absl::MutexLock lock(&mu);
    auto backed_off = [&] { return delays.size() >= 1; };
    ASSERT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(&backed_off), absl::Seconds(20)));
    EXPECT_EQ(delays[0], absl::Milliseconds(20));
  }
  // b's channel (2) failed, a fresh one to a (3) failed, then the wait.
  EXPECT_GE((*streamer)->connects(), 3u);
  (*streamer)->Stop();
}

TEST(StreamerTest, RefusesAnEmptyAddressInTheList) {
  auto spool = Spool::Open(TestTempDir("streamer"), 1 << 20);
  for (const char* bad : {"a:1,,b:2", ",a:1", "a:1,"}) {
    StreamerOptions o = Options(1);
    o.server = bad;
    auto s = Streamer::Create(o, spool->get());
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << bad;
    EXPECT_NE(s.status().message().find(bad), std::string::npos) << s.status();
  }
}

}  // namespace
}  // namespace tracehealth::agent
