// EventRecorder: stores the observed kernel events of committed reports,
// each compared with the prediction current for its host when the kernel
// logged it (event_compare.h), and counts each newly stored one in
// tracehealth_observed_events_total{kind,model,predicted}.
//
// The current prediction is that of the host's newest report observed at
// or before the event: the host's previous report (the batch's Previous,
// or an earlier one of the same batch) or the report carrying the event,
// both as the server shows them (server/calibration/report_pricer.h); when
// both were observed after it (an event that waited in the agent), the
// newest older one in the report store, searched back 24 h, as its agent
// sent it.
//
// An event arriving again (an agent that resent it after a crash) is
// stored and counted once. One without a kind, boot id or time is skipped
// (and logged), as are those past the first 64 of a report. A failure of the
// event store is logged; the events of that batch are not stored (their reports
// are).
//
// Thread safety: Record is called by one thread at a time (the writer's
// publisher). `events`, `reports` and `metrics` are not owned and must
// outlive the recorder.
#ifndef TRACEHEALTH_SERVER_EVENTS_EVENT_RECORDER_H_
#define TRACEHEALTH_SERVER_EVENTS_EVENT_RECORDER_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/types/span.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/calibration/report_pricer.h"
#include "server/metrics/server_metrics.h"
#include "server/storage/event_store.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

class EventRecorder {
 public:
  // A report carries at most 16 events; more than this are not stored.
  static constexpr int kMaxEventsPerReport = 64;

  using Log = std::function<void(const std::string& line)>;

  EventRecorder(EventStore* events, ReportStore* reports,
                ServerMetrics* metrics, Log log);

  // Records the events of `batch`; the batch's Previous is asked only for
  // hosts whose reports carry events.
  void Record(const PricedBatch& batch);

 private:
  // The host's newest stored report observed at or before `at_ns`.
  std::shared_ptr<const v1::HostReport> FromHistory(const std::string& host,
                                                    int64_t at_ns);
  v1::StoredEvent Compare(const std::string& host,
                          const v1::ObservedEvent& event,
                          const v1::HostReport* previous,
                          const v1::HostReport& carrier);

  EventStore* const events_;
  ReportStore* const reports_;
  ServerMetrics* const metrics_;
  const Log log_;
};

// The EventRow of `stored` (its columns and serialized form).
EventRow ToEventRow(const v1::StoredEvent& stored);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_EVENTS_EVENT_RECORDER_H_
