// A simulated agent for the replica tests: reports of one host every
// `period`, kept until acked, sent over one stream at a time to the next of
// several server addresses (as tracehealth-agent --server=a,b does), with a
// short backoff after a round in which no address answered.
//
// Thread safety: Run on one thread; made/acked/streams from any.
#ifndef TRACEHEALTH_TESTS_REPLICAS_SIM_AGENT_H_
#define TRACEHEALTH_TESTS_REPLICAS_SIM_AGENT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tests/reliability/ingest_client.h"

namespace tracehealth::testing {

class SimAgent {
 public:
  // Host "<prefix><index>" (FleetHost(index)), starting with addresses[first].
  SimAgent(std::vector<std::string> addresses, const std::string& prefix,
           int index, size_t first, absl::Duration period);

  const std::string& host_id() const { return host_id_; }

  // Reports until `stop`, then resends what is unacked for up to `drain`.
  void Run(const std::atomic<bool>& stop, absl::Duration phase,
           absl::Duration drain);

  uint64_t made();
  uint64_t acked();
  int streams() const { return streams_.load(); }
  // The address the current (or last) stream went to.
  std::string address();

 private:
  void Make();
  void Absorb();
  void Pump();

  const std::vector<std::string> addresses_;
  const std::string host_id_;
  const absl::Duration period_;
  v1::HostReport report_;
  size_t next_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TelemetryIngest::Stub> stub_;
  std::unique_ptr<ReportStream> stream_;
  bool stream_ok_ = false;
  bool acked_on_stream_ = false;
  uint64_t sent_upto_ = 0;
  size_t failed_in_a_row_ = 0;
  absl::Time retry_at_ = absl::InfinitePast();
  std::atomic<int> streams_{0};
  absl::Mutex mu_;
  std::string address_ ABSL_GUARDED_BY(mu_);
  uint64_t made_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<uint64_t> unacked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_REPLICAS_SIM_AGENT_H_
