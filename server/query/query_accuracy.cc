// QueryService::DoAccuracy: per hardware class, its calibrations and its
// hosts' observed events beside what was predicted for them, with the
// constants of then and of now.
#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/models/calibrated_constants.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/hardware_class.h"
#include "google/protobuf/util/time_util.h"
#include "server/calibration/calibrated_report.h"
#include "server/calibration/median.h"
#include "server/query/query_service.h"
#include "server/query/query_util.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr uint32_t kDefaultEvents = 1000;

// The stretch `ev` measures in `p` (see EventAccuracy in query.proto);
// nullopt for an unattributed event or a missing prediction.
std::optional<double> PredictedStretch(const v1::Predictions& p,
                                       const v1::StoredEvent& ev) {
  const v1::ObservedEvent& e = ev.event();
  if (e.model() == v1::EVENT_MODEL_VMAP_PURGE) {
    return p.vmap_purge().purge_seconds();
  }
  if (e.model() != v1::EVENT_MODEL_FGRAPH_ATTACH) return std::nullopt;
  std::vector<int> kinds(e.probe_kinds().begin(), e.probe_kinds().end());
  if (kinds.empty()) kinds.push_back(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  std::optional<double> worst;
  for (const v1::AttachPrediction& a : p.attach()) {
    if (std::find(kinds.begin(), kinds.end(), a.probe_kind()) == kinds.end())
      continue;
    const double s = e.kind() == v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP
                         ? a.non_yielding_seconds()
                         : a.latency_seconds();
    if (!worst || s > *worst) worst = s;
  }
  return worst;
}

std::string RecordClass(const HostRecord& r) {
  return HardwareClass(r.inputs.identity->cpu_model, r.inputs.release());
}

// The constants the host has now: its own calibration, else its class's.
std::optional<CalibratedConstants> ConstantsNow(
    const v1::HostReport& then, const HostIndex& index,
    const std::string& host_id, const ClassCalibrations* classes) {
  std::optional<HostEntry> e = index.Get(host_id);
  if (e && e->record.calibration != nullptr &&
      e->record.calibration->origin == ConstantsOrigin::kHostCalibration) {
    return *e->record.calibration;
  }
  if (classes == nullptr) return std::nullopt;
  std::optional<ClassConstants> k = classes->Of(ReportHardwareClass(then));
  if (!k) return std::nullopt;
  return k->Constants();
}

// Fills `s` from the report of then (`then`, may be null).
void Compare(const v1::StoredEvent& ev, const v1::HostReport* then,
             std::optional<CalibratedConstants> now, v1::EventAccuracy* s) {
  s->set_host_id(ev.host_id());
  s->set_kind(ev.event().kind());
  s->set_model(ev.event().model());
  *s->mutable_logged_at() = ev.event().logged_at();
  s->set_predicted(ev.predicted());
  const bool seconds = ev.event().has_seconds();
  if (seconds) s->set_observed_seconds(ev.event().seconds());
  if (then == nullptr) return;
  std::optional<double> p = PredictedStretch(then->predictions(), ev);
  if (p) s->set_predicted_seconds(*p);
  if (p && *p > 0 && seconds) s->set_ratio(ev.event().seconds() / *p);
  if (!now) return;
  std::optional<FeatureTable> table;
  ModelOptions options = HostModelOptions(*then, &table);
  options.calibration = now;
  const v1::Predictions repriced = PredictAll(then->snapshot(), options);
  std::optional<double> c = PredictedStretch(repriced, ev);
  if (!c) return;
  s->set_calibrated_seconds(*c);
  s->set_calibrated_basis(now->source);
  s->set_calibrated_origin(OriginToProto(now->origin));
  if (*c > 0 && seconds) s->set_calibrated_ratio(ev.event().seconds() / *c);
}

void SetMedians(v1::ClassAccuracy* c) {
  std::vector<double> r, cr;
  for (const v1::EventAccuracy& s : c->samples()) {
    if (s.has_ratio()) r.push_back(s.ratio());
    if (s.has_calibrated_ratio()) cr.push_back(s.calibrated_ratio());
  }
  if (!r.empty()) c->set_median_ratio(Median(r));
  if (!cr.empty()) c->set_median_calibrated_ratio(Median(cr));
}

}  // namespace

grpc::Status QueryService::DoAccuracy(const v1::AccuracyRequest& req,
                                      v1::AccuracyResponse* resp) const {
  std::vector<EventRow> event_rows;
  grpc::Status st = ReadEventWindow(
      options_.events, req.has_from() ? &req.from() : nullptr,
      req.has_to() ? &req.to() : nullptr, req.limit(), kDefaultEvents,
      options_.now(), EventFilter{}, &event_rows);
  if (!st.ok()) return st;
  std::map<std::string, v1::ClassAccuracy> classes;
  if (options_.classes != nullptr) {
    for (const ClassConstants& k : options_.classes->All()) {
      v1::ClassAccuracy& c = classes[k.hardware_class];
      c.set_hardware_class(k.hardware_class);
      c.set_canaries(k.canaries);
      c.set_calibrations(k.calibrations);
      c.set_c_visit_median_seconds(k.c_visit_median);
      c.set_c_visit_min_seconds(k.c_visit_min);
      c.set_c_visit_max_seconds(k.c_visit_max);
      if (k.c_visit_median > 0) {
        c.set_c_visit_spread((k.c_visit_max - k.c_visit_min) /
                             k.c_visit_median);
      }
      c.set_fixed_median_seconds(k.fixed_median);
      c.set_c_visit_seconds(k.c_visit_seconds());
      for (const VisitLevel& l : k.curve.levels) {
        v1::VisitLevel* level = c.add_visit_levels();
        level->set_from_tasks(l.from_tasks);
        level->set_factor(l.factor);
      }
      c.set_curve_points(static_cast<uint32_t>(k.curve.points));
      c.set_curve_min_threads(k.curve.min_threads);
      c.set_curve_max_threads(k.curve.max_threads);
    }
  }
  index_->ForEach([&](const std::string&, const HostEntry& e) {
    const std::string cls = RecordClass(e.record);
    if (cls.empty()) return;
    v1::ClassAccuracy& c = classes[cls];
    c.set_hardware_class(cls);
    c.set_hosts(c.hosts() + 1);
  });
  for (const EventRow& row : event_rows) {
    v1::StoredEvent ev;
    if (!ev.ParseFromString(row.blob)) {
      return grpc::Status(
          grpc::StatusCode::DATA_LOSS,
          absl::StrCat("stored event ", row.host_id, "/", row.boot_id, "/",
                       row.kmsg_seq, " does not parse"));
    }
    // The report current then, as its host sent it.
    std::optional<v1::HostReport> then;
    if (ev.has_prediction_seq() && options_.store != nullptr) {
      absl::StatusOr<std::string> blob =
          options_.store->GetReport(ev.host_id(), ev.prediction_seq());
      if (!blob.ok() || !then.emplace().ParseFromString(*blob)) then.reset();
    }
    std::string cls;
    if (then) cls = ReportHardwareClass(*then);
    if (cls.empty()) {
      std::optional<HostEntry> e = index_->Get(ev.host_id());
      if (e) cls = RecordClass(e->record);
    }
    if (cls.empty()) {
      resp->set_events_unclassified(resp->events_unclassified() + 1);
      continue;
    }
    v1::ClassAccuracy& c = classes[cls];
    c.set_hardware_class(cls);
    c.set_events(c.events() + 1);
    if (ev.predicted() == v1::EVENT_PREDICTION_YES) {
      c.set_events_predicted(c.events_predicted() + 1);
    } else if (ev.predicted() == v1::EVENT_PREDICTION_NO) {
      c.set_events_missed(c.events_missed() + 1);
    } else {
      c.set_events_unknown(c.events_unknown() + 1);
    }
    if (!then) continue;
    Compare(ev, &*then,
            ConstantsNow(*then, *index_, ev.host_id(), options_.classes),
            c.add_samples());
  }
  for (auto& [name, c] : classes) {
    SetMedians(&c);
    *resp->add_classes() = std::move(c);
  }
  return grpc::Status::OK;
}

}  // namespace tracehealth::server
