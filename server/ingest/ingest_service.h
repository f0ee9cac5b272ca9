// IngestService: the TelemetryIngest gRPC service (callback API).
//
// One reactor per Report stream (or ReportBatches stream, whose messages
// each carry several reports, taken in order as if each had come alone).
// Each report read is validated; a valid one
// is handed to the ReportWriter (when its queue is full, the stream reads
// nothing more until one of its reports completes: backpressure without
// blocking a gRPC thread), an invalid one is answered with a Rejection in
// the next Ack. Acks carry the highest seq this stream
// has seen committed (stored now or before: replays are acked) and are sent
// only after the writer has committed; acks that pile up while one is being
// written are coalesced. When a commit fails, nothing from that seq on is
// acked on the stream, which ends with UNAVAILABLE: the agent replays on a
// new stream.
//
// Identity: a stream serves one host (the first report's host_id). A report
// for another host, or (with client certificates required) for a host the
// certificate does not name, ends the stream with PERMISSION_DENIED.
//
// Thread safety: gRPC drives the reactors from its threads; writer
// callbacks arrive on the writer's publisher thread (on its writer thread
// for a report cancelled after a failed commit). BeginShutdown may be
// called from any thread.
#ifndef TRACEHEALTH_SERVER_INGEST_INGEST_SERVICE_H_
#define TRACEHEALTH_SERVER_INGEST_INGEST_SERVICE_H_

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "server/calibration/calibration_intake.h"
#include "server/ingest/descriptor_guard.h"
#include "server/ingest/heartbeat_bases.h"
#include "server/ingest/rate_limiter.h"
#include "server/ingest/report_writer.h"
#include "server/ingest/validate.h"
#include "server/metrics/server_metrics.h"

namespace tracehealth::server {

class ReportReactor;

struct IngestOptions {
  ValidationLimits limits;
  // Require a verified client certificate naming the host (mTLS).
  bool require_client_identity = false;
  // Per-host token bucket (reports/s, 0 = unlimited; burst). A report over
  // the limit ends its stream with RESOURCE_EXHAUSTED (after what was read
  // before it is committed and acked); the agent retries later, nothing is
  // dropped.
  double host_reports_per_second = 0;
  double host_report_burst = 600;
  // Report streams served at once at most (0: no limit): agents sending
  // now (an idle agent holds a connection, no stream). A stream beyond it
  // ends at once with RESOURCE_EXHAUSTED (counted in
  // tracehealth_ingest_streams_refused_total); the agent backs off and
  // retries on a new connection.
  int max_streams = 0;
  // Asked before each stream about its connection (not owned; null: no
  // check); a refused stream ends at once with RESOURCE_EXHAUSTED and the
  // guard's message, counted as above.
  DescriptorGuard* descriptors = nullptr;
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // Takes SubmitCalibration (not owned); null: UNIMPLEMENTED.
  CalibrationIntake* calibrations = nullptr;
  // Heartbeat forms (report.proto HeartbeatForm): the bases they are
  // rebuilt from (not owned); null: not accepted (acks do not offer them,
  // and one that arrives ends its stream with FAILED_PRECONDITION).
  HeartbeatBases* heartbeat_bases = nullptr;
};

class IngestService final
    : public v1::TelemetryIngest::WithRawCallbackMethod_Report<
          v1::TelemetryIngest::WithRawCallbackMethod_ReportBatches<
              v1::TelemetryIngest::WithCallbackMethod_SubmitCalibration<
                  v1::TelemetryIngest::Service>>> {
 public:
  // Not owned; all must outlive the service.
  IngestService(ReportWriter* writer, ServerMetrics* metrics,
                IngestOptions options);
  ~IngestService() override;

  // Raw bytes in and out (see ReportReactor).
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Report(
      grpc::CallbackServerContext* context) override;
  // The same, each message a ReportBatch whose reports are taken in order
  // as if each had come on a Report stream.
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ReportBatches(
      grpc::CallbackServerContext* context) override;

  // One calibration (server/calibration/calibration_intake.h), the
  // client certificate's names checked when identities are required.
  grpc::ServerUnaryReactor* SubmitCalibration(
      grpc::CallbackServerContext* context, const v1::Calibration* request,
      v1::SubmitCalibrationResponse* response) override;

  // Streams stop reading; each finishes (UNAVAILABLE) once the reports it
  // has read are committed and acked. Call before grpc::Server::Shutdown.
  void BeginShutdown();

 private:
  friend class ReportReactor;
  // A stream's reactor, admitted or refused (shutting down, stream limit,
  // descriptors).
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StartStream(
      grpc::CallbackServerContext* context, bool batched);
  void Unregister(ReportReactor* r);

  ReportWriter* const writer_;
  ServerMetrics* const metrics_;
  const IngestOptions options_;
  HostRateLimiter limiter_;
  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<ReportReactor*> reactors_ ABSL_GUARDED_BY(mu_);
  // The reactors counted against max_streams (the others were refused).
  absl::flat_hash_set<ReportReactor*> serving_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_INGEST_SERVICE_H_
