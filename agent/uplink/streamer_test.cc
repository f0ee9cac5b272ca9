#include "agent/uplink/streamer.h"

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "agent/testing/test_tmp.h"
#include "agent/uplink/spool.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"

namespace tracehealth::agent {
namespace {

// A TelemetryIngest service over loopback that keeps what it stored, acks
// the highest stored seq, treats replays as already stored, and rejects the
// seqs it is told to.
class RecordingIngest final : public v1::TelemetryIngest::Service {
 public:
  grpc::Status Report(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::HostReport>* stream) override {
    v1::HostReport r;
    while (stream->Read(&r)) {
      v1::Ack ack;
      {
        absl::MutexLock lock(&mu_);
        ++received_;
        if (reject_.count(r.seq())) {
          v1::Rejection* rej = ack.add_rejected();
          rej->set_seq(r.seq());
          rej->set_code(3);
          rej->set_message("invalid for the test");
        } else if (r.seq() > stored_max_) {
          stored_.push_back(r.seq());
          stored_max_ = r.seq();
        }
        ack.set_acked_seq(stored_max_);
      }
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }
  void Reject(uint64_t seq) {
    absl::MutexLock lock(&mu_);
    reject_.insert(seq);
  }
  std::vector<uint64_t> stored() {
    absl::MutexLock lock(&mu_);
    return stored_;
  }
  uint64_t received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  absl::Mutex mu_;
  std::set<uint64_t> reject_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> stored_ ABSL_GUARDED_BY(mu_);
  uint64_t stored_max_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t received_ ABSL_GUARDED_BY(mu_) = 0;
};

std::unique_ptr<grpc::Server> Serve(RecordingIngest* service, int* port) {
  grpc::ServerBuilder b;
  b.AddListeningPort(absl::StrCat("127.0.0.1:", *port),
                     grpc::InsecureServerCredentials(), port);
  b.RegisterService(service);
  return b.BuildAndStart();
}

// Stops the server, cancelling open streams (as a killed server would).
void ShutdownNow(grpc::Server* server) {
  server->Shutdown(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(50));
}

std::string ReportBytes(uint64_t seq) {
  v1::HostReport r;
  r.set_host_id("web-1");
  r.set_seq(seq);
  return r.SerializeAsString();
}

StreamerOptions Options(int port) {
  StreamerOptions o;
  o.server = absl::StrCat("127.0.0.1:", port);
  o.backoff.initial = absl::Milliseconds(20);
  o.backoff.max = absl::Milliseconds(160);
  o.random = [] { return 0.5; };  // no jitter offset: exact delays
  return o;
}

std::vector<uint64_t> Range(uint64_t a, uint64_t b) {
  std::vector<uint64_t> v;
  for (uint64_t s = a; s <= b; ++s) v.push_back(s);
  return v;
}

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
  // Both gone: a round over both addresses, then the backoff.
  ShutdownNow(b.get());
  b.reset();
  {
    absl::MutexLock lock(&mu);
    auto backed_off = [&] { return delays.size() >= 1; };
    ASSERT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(&backed_off), absl::Seconds(20)));
    EXPECT_EQ(delays[0], absl::Milliseconds(20));
  }
  EXPECT_GE((*streamer)->connects(), 4u);  // b failed, a failed, then waited
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
