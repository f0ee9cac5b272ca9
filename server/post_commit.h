// PostCommit: what follows each commit of the report writer
// (server/ingest/report_writer.h), on its publisher thread, in this order:
// - A failed commit (stats.failed) is counted
//   (tracehealth_ingest_commit_failures_total) and logged at most once a
//   minute, with the number of failures not logged since; nothing else
//   happens (the streams of the batch end UNAVAILABLE and their agents
//   replay).
// - Otherwise the batch is priced once (server/calibration/report_pricer.h:
//   each report as the server shows it, a host without a calibration of its
//   own priced with its class's constants; each host's previous report read
//   at most once), while the host index still holds each host's previous
//   report. The alert rules see the priced batch FIRST (`increased`
//   compares a report with the host's previous one); then the event
//   recorder (observed events against the prediction current when they
//   were logged); THEN the index takes it; then the stored/duplicate
//   counters and the commit histogram.
//
// Thread safety: OnCommitted is called by one thread at a time (the
// writer's publisher). The parts are not owned and must outlive this.
#ifndef TRACEHEALTH_SERVER_POST_COMMIT_H_
#define TRACEHEALTH_SERVER_POST_COMMIT_H_

#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/alerts/alerting.h"
#include "server/calibration/report_pricer.h"
#include "server/events/event_recorder.h"
#include "server/index/host_index.h"
#include "server/ingest/report_writer.h"
#include "server/metrics/server_metrics.h"
#include "server/report/committed_report.h"

namespace tracehealth::server {

class PostCommit {
 public:
  struct Parts {
    const ReportPricer* pricer = nullptr;
    Alerting* alerting = nullptr;
    EventRecorder* recorder = nullptr;
    HostIndex* index = nullptr;
    ServerMetrics* metrics = nullptr;
    std::function<void(const std::string& line)> log;
    std::function<absl::Time()> now;
  };

  explicit PostCommit(Parts parts);

  void OnCommitted(absl::Span<const CommittedReport> stored,
                   const BatchStats& stats);

 private:
  void LogCommitFailure(const BatchStats& stats);

  const Parts parts_;
  absl::Mutex failure_log_mu_;
  absl::Time last_failure_logged_ ABSL_GUARDED_BY(failure_log_mu_) =
      absl::InfinitePast();
  int unlogged_failures_ ABSL_GUARDED_BY(failure_log_mu_) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_POST_COMMIT_H_
