// Test clients of the real TelemetryIngest service: one Report stream with a
// thread collecting acks, and a "bystander" host that streams reports at a
// steady pace in the background so a test can show that other hosts are
// served normally while it attacks or breaks the server.
//
// Thread safety: ReportStream::Send is called from one thread at a time; the
// other members are safe from any thread. Bystander is owned by one thread.
#ifndef TRACEHEALTH_TESTS_RELIABILITY_INGEST_CLIENT_H_
#define TRACEHEALTH_TESTS_RELIABILITY_INGEST_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::testing {

class ReportStream {
 public:
  explicit ReportStream(v1::TelemetryIngest::Stub* stub);
  // Cancels the stream if it was not finished.
  ~ReportStream();

  // False once the stream is broken (the server ended it).
  bool Send(const v1::HostReport& report);
  // Waits until acked_seq >= seq or the stream ended; true when acked.
  bool WaitAcked(uint64_t seq, absl::Duration timeout = absl::Seconds(20));
  // Waits until `n` rejections arrived or the stream ended.
  bool WaitRejections(size_t n, absl::Duration timeout = absl::Seconds(20));
  // Waits until the server ended the stream (reads stopped).
  bool WaitClosed(absl::Duration timeout);
  uint64_t acked();
  // Whether an ack so far offered heartbeat forms.
  bool heartbeat_forms();
  std::vector<v1::Rejection> rejections();
  // Half-closes and returns the final status (once).
  grpc::Status Finish();

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::HostReport, v1::Ack>> stream_;
  std::thread reader_;
  bool finished_ = false;
  grpc::Status status_;
  absl::Mutex mu_;
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<v1::Rejection> rejections_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool heartbeat_forms_ ABSL_GUARDED_BY(mu_) = false;
};

// Streams reports of `host_id` every `period` from a background thread and
// records, for each, the time from send to ack.
class Bystander {
 public:
  Bystander(std::shared_ptr<grpc::Channel> channel, std::string host_id,
            absl::Duration period = absl::Milliseconds(20));
  // Stops (as Stop()).
  ~Bystander();

  // Stops sending, waits for the outstanding acks (up to 20 s) and returns
  // the final stream status. Idempotent.
  grpc::Status Stop();

  uint64_t sent() const { return sent_.load(); }
  uint64_t acked();
  // Whether an ack so far offered heartbeat forms.
  bool heartbeat_forms();
  // Longest time a report waited for its ack (so far, acked reports only).
  absl::Duration max_ack_latency();
  // Waits until at least `n` more reports than now are acked.
  bool WaitProgress(uint64_t n, absl::Duration timeout = absl::Seconds(20));

 private:
  void Run();
  void UpdateLatency();

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TelemetryIngest::Stub> stub_;
  std::unique_ptr<ReportStream> stream_;
  const std::string host_id_;
  const absl::Duration period_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent_{0};
  std::thread sender_;
  std::thread watcher_;
  bool stopped_ = false;
  grpc::Status status_;
  absl::Mutex mu_;
  std::vector<absl::Time> send_times_ ABSL_GUARDED_BY(mu_);
  uint64_t seen_acked_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration max_latency_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
};

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_RELIABILITY_INGEST_CLIENT_H_
