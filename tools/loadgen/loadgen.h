// Load generator: N simulated hosts, one Report stream each (or one per
// report, stream_per_report), streaming
// realistic HostReports (SampleReport: the real models run once per host;
// seq and observed_at vary per report) with a bounded window of unacked
// reports per stream, like the agent.
//
// Thread safety: RunLoad is self-contained; call it from one thread.
#ifndef TRACEHEALTH_TOOLS_LOADGEN_LOADGEN_H_
#define TRACEHEALTH_TOOLS_LOADGEN_LOADGEN_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"

namespace tracehealth::server {

struct LoadOptions {
  std::string server;                                     // host:port
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // null: insecure
  std::string tls_server_name;  // TLS target-name override, if set
  int hosts = 100;
  int first_host = 0;  // FleetHost(first_host .. first_host + hosts - 1)
  uint64_t first_seq = 1;
  absl::Duration duration = absl::Seconds(10);
  // Stop a host after this many reports (0: until `duration`).
  uint64_t reports_per_host = 0;
  // Unacked reports in flight per stream.
  int window = 64;
  // gRPC channels the streams are spread over.
  int channels = 4;
  // Each host sends a report at most this often (zero: as fast as the
  // window allows), like an agent's interval.
  absl::Duration report_interval = absl::ZeroDuration();
  // After reports_per_host, keep the stream open (idle) until `duration`
  // ends instead of closing it: an agent between reports.
  bool hold_open = false;
  // Each report goes on a stream of its own, half-closed once it is acked,
  // while the host's channel stays connected (the agent's behaviour):
  // with reports_per_host, hosts then idle on a connection without a call
  // until `duration` ends or `stop`. Otherwise one stream per host for the
  // whole run (hold_open: held open after reports_per_host, the agent's
  // behaviour before streams were closed between reports).
  bool stream_per_report = false;
  // Heartbeat forms (report.proto HeartbeatForm), as an agent sends them to
  // a server that offers them: each stream's first report whole, marked as
  // a base, the others (the sample report does not change) in heartbeat
  // form on it.
  bool heartbeat_forms = false;
  // Reports per message: above 1, streams are ReportBatches streams and each
  // message carries up to this many reports (as many as the window has
  // room for), as an agent replaying a backlog sends them.
  int batch = 1;
  // When set, RunLoad ends early once it reads true (checked every 100 ms).
  const std::atomic<bool>* stop = nullptr;
  // Called once every host's reports_per_host were acked (with hold_open:
  // while the streams stay open; with stream_per_report: while the
  // channels stay connected).
  std::function<void()> on_all_acked;
  // The hosts' first streams start evenly over this time (host i at
  // i / hosts of it), as agents do when a rollout starts them, instead of
  // all at once.
  absl::Duration start_spread = absl::ZeroDuration();
  // Called once every host's first stream has been started.
  std::function<void()> on_started;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (each simulated host on
// its own channel holds a descriptor). Returns the hard limit, or 0 when it
// cannot be read.
uint64_t RaiseOpenFileLimit();

struct LoadResult {
  uint64_t sent = 0;
  uint64_t acked = 0;  // reports covered by acks (durably stored)
  uint64_t rejected = 0;
  uint64_t failed_streams = 0;
  absl::Duration elapsed;
  double acked_per_second = 0;
  // Send-to-ack latency over all acked reports.
  absl::Duration ack_p50, ack_p90, ack_p99, ack_max;
  int64_t report_bytes = 0;  // size of one serialized report (host 0)
  int64_t form_bytes = 0;    // of its heartbeat form (heartbeat_forms)
  std::string first_error;
};

absl::StatusOr<LoadResult> RunLoad(const LoadOptions& options);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_TOOLS_LOADGEN_LOADGEN_H_
