#include "server/events/event_recorder.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/event_names.h"
#include "common/proto_time.h"
#include "server/events/event_compare.h"

namespace tracehealth::server {
namespace {

int64_t Nanos(const google::protobuf::Timestamp& ts) {
  return absl::ToUnixNanos(FromProto(ts));
}

// Of the candidates, the newest observed at or before `at_ns` (null: none).
const v1::HostReport* Newest(const v1::HostReport* a, const v1::HostReport* b,
                             int64_t at_ns) {
  const v1::HostReport* best = nullptr;
  for (const v1::HostReport* r : {a, b}) {
    if (r == nullptr || Nanos(r->observed_at()) > at_ns) continue;
    if (best == nullptr ||
        Nanos(r->observed_at()) >= Nanos(best->observed_at())) {
      best = r;
    }
  }
  return best;
}

// An event an agent of this version makes: named (boot id, kmsg seq),
// dated and of a known kind. Others are not stored (their report is).
bool Storable(const v1::ObservedEvent& e) {
  return !e.boot_id().empty() && e.has_logged_at() &&
         e.kind() != v1::OBSERVED_EVENT_KIND_UNSPECIFIED &&
         v1::ObservedEventKind_IsValid(e.kind());
}

const char* PredictedLabel(v1::EventPrediction p) {
  switch (p) {
    case v1::EVENT_PREDICTION_YES:
      return "yes";
    case v1::EVENT_PREDICTION_NO:
      return "no";
    default:
      return "unknown";
  }
}

}  // namespace

EventRow ToEventRow(const v1::StoredEvent& stored) {
  EventRow row;
  row.host_id = stored.host_id();
  row.boot_id = stored.event().boot_id();
  row.kmsg_seq = stored.event().kmsg_seq();
  row.logged_at_ns = Nanos(stored.event().logged_at());
  row.kind = stored.event().kind();
  row.model = stored.event().model();
  row.predicted = stored.predicted();
  row.received_at_ns = Nanos(stored.received_at());
  row.blob = stored.SerializeAsString();
  return row;
}

EventRecorder::EventRecorder(EventStore* events, ReportStore* reports,
                             ServerMetrics* metrics, Log log)
    : events_(events),
      reports_(reports),
      metrics_(metrics),
      log_(std::move(log)) {}

std::shared_ptr<const v1::HostReport> EventRecorder::FromHistory(
    const std::string& host, int64_t at_ns) {
  int64_t from = at_ns - absl::ToInt64Nanoseconds(absl::Hours(24));
  // A thinned window's last row need not be the newest: narrow the window
  // to start there until nothing is left out.
  for (int tries = 0; tries < 4; ++tries) {
    absl::StatusOr<HistoryRows> h =
        reports_->ReadHostHistory(host, from, at_ns + 1, 1000);
    if (!h.ok() || h->rows.empty()) return nullptr;
    if (h->matched <= static_cast<int64_t>(h->rows.size()) || tries == 3) {
      auto report = std::make_shared<v1::HostReport>();
      if (!report->ParseFromString(h->rows.back().blob)) return nullptr;
      return report;
    }
    from = h->rows.back().observed_at_ns;
  }
  return nullptr;
}

v1::StoredEvent EventRecorder::Compare(const std::string& host,
                                       const v1::ObservedEvent& event,
                                       const v1::HostReport* previous,
                                       const v1::HostReport& carrier) {
  const int64_t at = Nanos(event.logged_at());
  const v1::HostReport* current = Newest(previous, &carrier, at);
  std::shared_ptr<const v1::HostReport> older;
  if (current == nullptr) {
    older = FromHistory(host, at);
    current = older.get();
  }
  EventComparison c = CompareEvent(event, current);
  v1::StoredEvent s;
  s.set_host_id(host);
  *s.mutable_event() = event;
  s.set_predicted(c.predicted);
  s.set_predicted_risk(c.risk);
  if (current != nullptr) {
    s.set_prediction_seq(current->seq());
    *s.mutable_prediction_observed_at() = current->observed_at();
  }
  s.set_report_seq(carrier.seq());
  return s;
}

void EventRecorder::Record(const PricedBatch& batch) {
  std::vector<EventRow> rows;
  std::vector<v1::StoredEvent> events;
  // Each host's newest report so far in this batch.
  absl::flat_hash_map<std::string, std::shared_ptr<const v1::HostReport>>
      latest;
  int unstorable = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const CommittedReport& c = batch.committed(i);
    const std::string& host = c.report->host_id();
    std::shared_ptr<const v1::HostReport> report = batch.shown(i);
    if (report->observed_events_size() > 0) {
      auto it = latest.find(host);
      std::shared_ptr<const v1::HostReport> prev =
          it != latest.end() ? it->second : batch.Previous(host);
      const int n =
          std::min(report->observed_events_size(), kMaxEventsPerReport);
      for (int i = 0; i < n; ++i) {
        const v1::ObservedEvent& e = report->observed_events(i);
        if (!Storable(e)) {
          ++unstorable;
          continue;
        }
        v1::StoredEvent s = Compare(host, e, prev.get(), *report);
        *s.mutable_received_at() = ToProto(c.received_at);
        rows.push_back(ToEventRow(s));
        events.push_back(std::move(s));
      }
    }
    latest[host] = std::move(report);
  }
  if (unstorable > 0) {
    log_(absl::StrCat(unstorable,
                      " observed events without a kind, boot id or time "
                      "skipped"));
  }
  if (rows.empty()) return;
  absl::StatusOr<std::vector<bool>> put = events_->PutEvents(rows);
  if (!put.ok()) {
    log_(absl::StrCat("storing ", rows.size(),
                      " observed events failed: ", put.status().ToString()));
    return;
  }
  for (size_t i = 0; i < events.size() && i < put->size(); ++i) {
    if (!(*put)[i]) continue;
    metrics_->CountObservedEvent(EventKindLabel(events[i].event().kind()),
                                 EventModelLabel(events[i].event().model()),
                                 PredictedLabel(events[i].predicted()));
  }
}

}  // namespace tracehealth::server
