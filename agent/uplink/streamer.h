// Streamer: sends spooled HostReports to the server's TelemetryIngest.Report
// stream, in seq order, and applies the server's acks: records up to
// Ack.acked_seq leave the spool; rejected records are removed and counted.
//
// A stream is open only while there is something to send: once the spool is
// empty and every record written on it was acked or rejected, the streamer
// half-closes it and reads it to its end (OK: not a failure; nothing is
// logged, no backoff). The channel (one HTTP/2 connection) stays, and the
// next Wake() opens a new stream on it, so an agent between reports costs
// the server a connection but no call. The server closes connections that
// had no stream for 5 minutes; with a longer interval gRPC connects again
// for the next stream, which is not a failure either.
//
// When a stream breaks, is refused or ends before it was half-closed, the
// streamer drops its channel (closing the connection), makes a fresh one to
// the next address and replays every record still in the spool, with
// exponential backoff and jitter once every address failed in a row (the
// server acknowledges replays of stored seqs without storing them again), so
// every report reaches the server exactly once, in order, unless the spool
// bound dropped it. Each stream starts with the oldest unacked record.
//
// Heartbeat forms: once the server's acks on a channel say it accepts them,
// reports go whole or in heartbeat form as a HeartbeatFormer decides
// (StreamerOptions::whole_report_interval). A failed stream or a new channel
// sends the next report whole. A stream the server ends with
// FAILED_PRECONDITION (it does not hold the base a heartbeat form named) is
// no failure: the streamer opens the next one on the same channel at once,
// its first report whole.
//
// Batches: once the server's acks on a channel say it takes ReportBatches
// streams, the next streams are ReportBatches streams: the reports ready
// when a message is written (a backlog after an outage; in steady state one)
// go together, up to StreamerOptions::max_batch_reports and 1 MiB. A batched
// stream the server ends with UNIMPLEMENTED (a replica without them behind
// the same address) is no failure: one report a message from then on, on a
// new stream at once.
//
// Threads: Start() runs one sender thread (plus a reader per stream). Wake(),
// Flush(), Health(), Stop(), connects() and streams() may be called from
// any thread.
//
// Ownership: `spool` is not owned and must outlive the streamer.
#ifndef TRACEHEALTH_AGENT_UPLINK_STREAMER_H_
#define TRACEHEALTH_AGENT_UPLINK_STREAMER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/uplink/backoff.h"
#include "agent/uplink/spool.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

struct StreamerOptions {
  // host:port of the server, or several, comma-separated (replicas): the
  // streamer stays on the one that works; after a failed or refused stream
  // it goes to the next one; a round in which none answered is followed by
  // the backoff. A connection closed by the server between streams (idle
  // time, maximum connection age) is made again by gRPC to the same
  // address.
  std::string server;
  // PEM files: CA of the server (enables TLS), client cert and key (mTLS).
  std::string tls_ca, tls_cert, tls_key;
  // Name to check the server certificate against instead of the host in
  // `server` (e.g. when connecting by IP address); "" keeps the host.
  std::string tls_server_name;
  BackoffOptions backoff;
  // Uniform [0, 1) source for the jitter (default: a seeded PRNG).
  std::function<double()> random;
  // Called with every backoff delay before it is waited (tests observe it).
  std::function<void(absl::Duration)> on_backoff;
  // Reports written but not yet acked, at most.
  uint64_t max_in_flight = 64;
  // To a server whose acks say it takes ReportBatches streams, the reports
  // ready to send (a backlog) go up to this many a message (and up to 1 MiB
  // of reports); 0 or 1: one report a message.
  uint64_t max_batch_reports = 64;
  // Heartbeat forms (heartbeat_former.h): to a server whose acks say it
  // accepts them, a report whose material content equals the last one sent
  // whole goes in heartbeat form, and one goes whole at least this often.
  // Zero: every report whole.
  absl::Duration whole_report_interval = absl::Hours(6);
};

class Streamer {
 public:
  // Errors: an empty server address or list entry (InvalidArgument),
  // unreadable TLS files.
  static absl::StatusOr<std::unique_ptr<Streamer>> Create(
      StreamerOptions options, Spool* spool);
  ~Streamer();

  void Start();
  // New records are in the spool.
  void Wake();
  // Waits until the spool is empty or `timeout` passed; true when empty.
  bool Flush(absl::Duration timeout);
  // Stops the sender (cancels the stream); idempotent.
  void Stop();

  // Spool and ack figures for the next report's AgentHealth.
  v1::AgentHealth Health() const;
  // Channels made so far: one at the start and one after each failed
  // stream (streams that ended cleanly reuse theirs).
  uint64_t connects() const;
  // Report streams opened so far (one per send that found records to send,
  // plus one per retry).
  uint64_t streams() const;
  // Reports sent in heartbeat form so far (each send counts, replays too).
  uint64_t heartbeat_forms() const;

 private:
  class Impl;
  explicit Streamer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_UPLINK_STREAMER_H_
