// Test helpers of the streamer's tests: a recording TelemetryIngest service
// on loopback, the fixture around it, and the reports and options those
// tests use.
#ifndef TRACEHEALTH_AGENT_UPLINK_RECORDING_INGEST_H_
#define TRACEHEALTH_AGENT_UPLINK_RECORDING_INGEST_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/testing/test_tmp.h"
#include "agent/uplink/spool.h"
#include "agent/uplink/streamer.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::agent {

// A TelemetryIngest service over loopback that keeps what it stored, acks
// the highest stored seq, treats replays as already stored, and rejects the
// seqs it is told to. It records each stream's peer (address and port of
// the client's connection) and counts the streams that ended; it can refuse
// streams and break one after storing a given seq, before acking it.
class RecordingIngest final : public v1::TelemetryIngest::Service {
 public:
  grpc::Status Report(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::HostReport>* stream) override {
    {
      absl::MutexLock lock(&mu_);
      peers_.push_back(context->peer());
      if (refuse_ > 0) {
        --refuse_;
        ++ended_;
        return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "full for the test");
      }
    }
    v1::HostReport r;
    while (stream->Read(&r)) {
      v1::Ack ack;
      {
        absl::MutexLock lock(&mu_);
        batches_.push_back(1);
        if (std::optional<grpc::Status> end = TakeLocked(r, &ack)) return *end;
        ack.set_acked_seq(stored_max_);
      }
      if (!stream->Write(ack)) break;
    }
    absl::MutexLock lock(&mu_);
    ++ended_;
    return grpc::Status::OK;
  }

  // As Report, a message at a time, each report as Report takes it; one
  // ack a message. Without OfferBatches, UNIMPLEMENTED (a server without
  // them).
  grpc::Status ReportBatches(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::ReportBatch>* stream) override {
    {
      absl::MutexLock lock(&mu_);
      peers_.push_back(context->peer());
      if (!offer_batches_) {
        ++ended_;
        ++unimplemented_;
        return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no batches");
      }
    }
    v1::ReportBatch batch;
    while (stream->Read(&batch)) {
      v1::Ack ack;
      {
        absl::MutexLock lock(&mu_);
        batches_.push_back(batch.reports_size());
        for (const v1::HostReport& r : batch.reports()) {
          if (std::optional<grpc::Status> end = TakeLocked(r, &ack)) {
            return *end;
          }
        }
        ack.set_acked_seq(stored_max_);
      }
      if (!stream->Write(ack)) break;
    }
    absl::MutexLock lock(&mu_);
    ++ended_;
    return grpc::Status::OK;
  }

  void Reject(uint64_t seq) {
    absl::MutexLock lock(&mu_);
    reject_.insert(seq);
  }
  void Refuse(int streams) {
    absl::MutexLock lock(&mu_);
    refuse_ = streams;
  }
  void BreakAfterStoring(uint64_t seq) {
    absl::MutexLock lock(&mu_);
    break_after_ = seq;
  }
  // Acks say the server takes ReportBatches streams, and it does; before,
  // a ReportBatches stream ends UNIMPLEMENTED.
  void OfferBatches(bool offer = true) {
    absl::MutexLock lock(&mu_);
    offer_batches_ = offer;
  }
  // Ack offers of batches without taking them (an older replica behind the
  // same address as a newer one).
  void OfferBatchesWithout() {
    absl::MutexLock lock(&mu_);
    ack_offers_batches_ = true;
  }
  // Reports per message received, in order (Report streams: 1 each).
  std::vector<int> batches() {
    absl::MutexLock lock(&mu_);
    return batches_;
  }
  int unimplemented() {
    absl::MutexLock lock(&mu_);
    return unimplemented_;
  }
  void OfferHeartbeatForms() {
    absl::MutexLock lock(&mu_);
    offer_forms_ = true;
  }
  // The next heartbeat form of `seq` ends its stream (once).
  void NoBaseAt(uint64_t seq) {
    absl::MutexLock lock(&mu_);
    no_base_at_ = seq;
  }
  // Per report received, in order: -1 sent whole unmarked, 0 whole as a
  // base, else the heartbeat form's base_seq.
  std::vector<int64_t> forms() {
    absl::MutexLock lock(&mu_);
    return forms_;
  }
  std::vector<uint64_t> stored() {
    absl::MutexLock lock(&mu_);
    return stored_;
  }
  uint64_t received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }
  std::vector<std::string> peers() {
    absl::MutexLock lock(&mu_);
    return peers_;
  }
  // Waits until `n` streams ended on the server's side.
  bool WaitEnded(int n, absl::Duration timeout = absl::Seconds(20)) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return ended_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
  int ended() {
    absl::MutexLock lock(&mu_);
    return ended_;
  }

 private:
  // Takes one report into `ack` (rejection or stored); the status to end
  // the stream with when the test asked for an end at it.
  std::optional<grpc::Status> TakeLocked(const v1::HostReport& r, v1::Ack* ack)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++received_;
    forms_.push_back(r.has_heartbeat()
                         ? static_cast<int64_t>(r.heartbeat().base_seq())
                         : -1);
    ack->set_heartbeat_forms(offer_forms_);
    ack->set_report_batches(offer_batches_ || ack_offers_batches_);
    if (r.heartbeat().base_seq() > 0 && r.seq() == no_base_at_) {
      no_base_at_ = 0;
      ++ended_;
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "no base for the test");
    }
    if (reject_.count(r.seq())) {
      v1::Rejection* rej = ack->add_rejected();
      rej->set_seq(r.seq());
      rej->set_code(3);
      rej->set_message("invalid for the test");
    } else if (r.seq() > stored_max_) {
      stored_.push_back(r.seq());
      stored_max_ = r.seq();
      if (r.seq() == break_after_) {
        ++ended_;
        return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "broken for the test");
      }
    }
    return std::nullopt;
  }

  absl::Mutex mu_;
  std::set<uint64_t> reject_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> stored_ ABSL_GUARDED_BY(mu_);
  uint64_t stored_max_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t received_ ABSL_GUARDED_BY(mu_) = 0;
  int refuse_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t break_after_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> peers_ ABSL_GUARDED_BY(mu_);
  bool offer_forms_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t no_base_at_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> forms_ ABSL_GUARDED_BY(mu_);
  bool offer_batches_ ABSL_GUARDED_BY(mu_) = false;
  bool ack_offers_batches_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int> batches_ ABSL_GUARDED_BY(mu_);
  int unimplemented_ ABSL_GUARDED_BY(mu_) = 0;
  int ended_ ABSL_GUARDED_BY(mu_) = 0;
};

inline std::unique_ptr<grpc::Server> Serve(RecordingIngest* service,
                                           int* port) {
  grpc::ServerBuilder b;
  b.AddListeningPort(absl::StrCat("127.0.0.1:", *port),
                     grpc::InsecureServerCredentials(), port);
  b.RegisterService(service);
  return b.BuildAndStart();
}

// Stops the server, cancelling open streams (as a killed server would).
inline void ShutdownNow(grpc::Server* server) {
  server->Shutdown(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(50));
}

inline std::string ReportBytes(uint64_t seq) {
  v1::HostReport r;
  r.set_host_id("web-1");
  r.set_seq(seq);
  return r.SerializeAsString();
}

inline StreamerOptions Options(int port) {
  StreamerOptions o;
  o.server = absl::StrCat("127.0.0.1:", port);
  o.backoff.initial = absl::Milliseconds(20);
  o.backoff.max = absl::Milliseconds(160);
  o.random = [] { return 0.5; };  // no jitter offset: exact delays
  return o;
}

inline std::vector<uint64_t> Range(uint64_t a, uint64_t b) {
  std::vector<uint64_t> v;
  for (uint64_t s = a; s <= b; ++s) v.push_back(s);
  return v;
}

// Report `seq` of a steady host "web-1" (15 s after the previous one) with
// `threads`: the same material content at the same thread count, a change
// at 20 % more.
inline std::string SteadyReport(uint64_t seq, uint64_t threads = 100000) {
  server::SampleHost h;
  h.host_id = "web-1";
  h.threads = threads;
  return server::SampleReport(
             h, seq,
             absl::FromUnixSeconds(1800000000) + absl::Seconds(15 * seq))
      .SerializeAsString();
}

// A recording server on loopback, a spool in a fresh directory and the
// streamer a test starts on them (stopped before the server).
class StreamerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = Serve(&service_, &port_);
    ASSERT_GT(port_, 0);
    auto spool = Spool::Open(TestTempDir("streamer"), 64 << 20);
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

  RecordingIngest service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Streamer> streamer_;
};

// Records the backoff delays a streamer waits.
class Delays {
 public:
  explicit Delays(StreamerOptions* o) {
    o->on_backoff = [this](absl::Duration d) {
      absl::MutexLock lock(&mu_);
      delays_.push_back(d);
    };
  }
  std::vector<absl::Duration> get() {
    absl::MutexLock lock(&mu_);
    return delays_;
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::Duration> delays_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_UPLINK_RECORDING_INGEST_H_
