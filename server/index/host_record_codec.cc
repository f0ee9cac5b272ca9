#include "server/index/host_record_codec.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/models/calibrated_constants.h"
#include "common/models/evaluate.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace tracehealth::server {
namespace {

using Stored = v1::StoredHostRecord;

void PutInputs(const AttachModelInputs& in, Stored* s) {
  const KernelIdentity& id = *in.identity;
  s->set_release(id.release);
  s->set_kernel_version(id.version);
  s->set_upstream_version(id.upstream_version);
  s->set_arch(id.arch);
  s->set_cpu_model(id.cpu_model);
  s->set_identity_present(id.present);
  s->set_threads_total(in.threads_total);
  s->set_null_threads_bound(in.null_threads_bound);
  s->set_available_filter_functions(in.available_filter_functions);
  s->set_ftrace_filter_functions(in.ftrace_filter_functions);
  s->set_page_size(in.page_size);
  s->set_watchdog_thresh_seconds(in.watchdog_thresh_seconds);
  s->set_rcu_cpu_stall_timeout_seconds(in.rcu_cpu_stall_timeout_seconds);
  s->set_hung_task_timeout_seconds(in.hung_task_timeout_seconds);
  s->set_online_cpus(in.online_cpus);
  s->set_possible_cpus(in.possible_cpus);
  s->set_l3_cache_bytes(in.l3_cache_bytes);
  s->set_preempt_mode(in.preempt_mode);
  s->set_input_bits(in.bits);
}

AttachModelInputs GetInputs(const Stored& s, KernelIdentityCache* identities) {
  AttachModelInputs in;
  KernelIdentity id;
  id.release = s.release();
  id.version = s.kernel_version();
  id.upstream_version = s.upstream_version();
  id.arch = s.arch();
  id.cpu_model = s.cpu_model();
  id.present = static_cast<uint8_t>(s.identity_present());
  if (identities != nullptr) {
    in.identity = identities->Intern(std::move(id));
  } else if (id.present != 0) {
    in.identity = std::make_shared<const KernelIdentity>(std::move(id));
  }
  in.threads_total = s.threads_total();
  in.null_threads_bound = s.null_threads_bound();
  in.available_filter_functions = s.available_filter_functions();
  in.ftrace_filter_functions = s.ftrace_filter_functions();
  in.page_size = s.page_size();
  in.watchdog_thresh_seconds = s.watchdog_thresh_seconds();
  in.rcu_cpu_stall_timeout_seconds = s.rcu_cpu_stall_timeout_seconds();
  in.hung_task_timeout_seconds = s.hung_task_timeout_seconds();
  in.online_cpus = s.online_cpus();
  in.possible_cpus = s.possible_cpus();
  in.l3_cache_bytes = s.l3_cache_bytes();
  in.preempt_mode = static_cast<v1::PreemptMode>(s.preempt_mode());
  in.bits = s.input_bits();
  return in;
}

void PutPredictions(const HostRecord& h, Stored* s) {
  s->set_worst_risk(h.worst_risk);
  if (h.worst_margin.has_value()) s->set_worst_margin(*h.worst_margin);
  for (int i = 0; i < kProbeKinds; ++i) {
    const StoredAttach& a = h.attach[i];
    if (!a.present) continue;
    Stored::Attach* out = s->add_attach();
    out->set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER + i);
    out->set_latency_seconds(a.latency_seconds);
    for (double m : a.margins) out->add_margins(m);
    out->set_applies(a.applies);
    out->set_risk(a.risk);
  }
  if (h.pool_budget_ratio.has_value()) {
    s->set_pool_budget_ratio(*h.pool_budget_ratio);
  }
  if (h.seconds_to_exhaustion.has_value()) {
    s->set_seconds_to_exhaustion(*h.seconds_to_exhaustion);
  }
  s->set_stack_depot_risk(h.stack_depot_risk);
  s->set_vmap_applies(h.vmap_applies);
  s->set_purge_seconds(h.purge_seconds);
  if (h.purge_lockup_margin.has_value()) {
    s->set_purge_lockup_margin(*h.purge_lockup_margin);
  }
  s->set_vmap_risk(h.vmap_risk);
}

absl::Status GetPredictions(const Stored& s, HostRecord* h) {
  h->worst_risk = static_cast<v1::Risk>(s.worst_risk());
  if (s.has_worst_margin()) h->worst_margin = s.worst_margin();
  for (const Stored::Attach& a : s.attach()) {
    const int i = a.probe_kind() - v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
    if (i < 0 || i >= kProbeKinds || h->attach[i].present ||
        a.margins_size() != kStoredChecks) {
      return absl::DataLossError(
          absl::StrCat("stored record: attach prediction of probe kind ",
                       a.probe_kind(), " with ", a.margins_size(), " margins"));
    }
    StoredAttach& out = h->attach[i];
    out.present = true;
    out.latency_seconds = a.latency_seconds();
    for (int c = 0; c < kStoredChecks; ++c) out.margins[c] = a.margins(c);
    out.applies = static_cast<uint8_t>(a.applies());
    out.risk = static_cast<v1::Risk>(a.risk());
  }
  if (s.has_pool_budget_ratio()) h->pool_budget_ratio = s.pool_budget_ratio();
  if (s.has_seconds_to_exhaustion()) {
    h->seconds_to_exhaustion = s.seconds_to_exhaustion();
  }
  h->stack_depot_risk = static_cast<v1::Risk>(s.stack_depot_risk());
  h->vmap_applies = s.vmap_applies();
  h->purge_seconds = s.purge_seconds();
  if (s.has_purge_lockup_margin()) {
    h->purge_lockup_margin = s.purge_lockup_margin();
  }
  h->vmap_risk = static_cast<v1::Risk>(s.vmap_risk());
  return absl::OkStatus();
}

}  // namespace

void FillStoredRecord(const v1::HostReport& report, v1::StoredHostRecord* s) {
  // The override is copied as it is: the record's parsed table is not
  // needed to encode it. Identities are interned per thread, so a fleet of
  // a few kernels does not allocate their strings for every report.
  static FeatureTableCache* const no_tables = new FeatureTableCache;
  thread_local KernelIdentityCache identities;
  v1::HostReport without_override;
  const v1::HostReport* source = &report;
  if (report.has_feature_table_override()) {
    // MakeHostRecord would parse the table only to have it dropped.
    without_override = report;
    without_override.clear_feature_table_override();
    source = &without_override;
  }
  const HostRecord h = MakeHostRecord(*source, *no_tables, &identities);
  s->Clear();
  s->set_format_version(kHostRecordFormatVersion);
  s->set_made_under_model_version(kModelVersion);
  s->set_report_model_version(report.model_version());
  s->set_seq(h.seq);
  s->set_has_observed_at(h.has_observed_at);
  s->set_observed_at_seconds(h.observed_at_seconds);
  s->set_observed_at_nanos(h.observed_at_nanos);
  s->set_interval_seconds(h.interval_seconds);
  s->set_spool_dropped_total(h.spool_dropped_total);
  *s->mutable_labels() = report.labels();
  if (report.has_feature_table_override()) {
    *s->mutable_feature_table_override() = report.feature_table_override();
  }
  if (h.calibration != nullptr) {
    Stored::Calibration* c = s->mutable_calibration();
    c->set_c_visit_seconds(h.calibration->c_visit_seconds);
    c->set_fixed_seconds(h.calibration->fixed_seconds);
    c->set_c_pass_seconds(h.calibration->c_pass_seconds);
    c->set_source(h.calibration->source);
    c->set_origin(OriginToProto(h.calibration->origin));
    for (const VisitLevel& l : h.calibration->visit_levels) {
      Stored::Calibration::Level* level = c->add_visit_levels();
      level->set_from_tasks(l.from_tasks);
      level->set_factor(l.factor);
    }
  }
  PutInputs(h.inputs, s);
  PutPredictions(h, s);
}

v1::StoredHostRecord ToStoredRecord(const v1::HostReport& report) {
  Stored s;
  FillStoredRecord(report, &s);
  return s;
}

std::string EncodeHostRecord(const v1::HostReport& report) {
  // One message per thread, filled again and again: its memory is reused.
  thread_local Stored s;
  FillStoredRecord(report, &s);
  // Deterministic: the labels map in key order. A reused message's map
  // iterates in an order that depends on its history, and equal records
  // must be equal bytes (stores and tests compare them).
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream coded(&raw);
    coded.SetSerializationDeterministic(true);
    s.SerializeToCodedStream(&coded);
  }
  return out;
}

absl::StatusOr<HostRecord> DecodeHostRecord(absl::string_view bytes,
                                            FeatureTableCache& tables,
                                            KernelIdentityCache* identities) {
  // One message per thread, parsed into again and again.
  thread_local Stored s;
  if (!s.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("stored record does not parse");
  }
  if (s.format_version() != kHostRecordFormatVersion ||
      s.made_under_model_version() != kModelVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "stored record of format ", s.format_version(), ", model version \"",
        s.made_under_model_version(), "\" (this server: format ",
        kHostRecordFormatVersion, ", model version \"", kModelVersion, "\")"));
  }
  HostRecord h;
  h.inputs = GetInputs(s, identities);
  if (s.has_feature_table_override()) {
    h.features = tables.Get(s.feature_table_override());
  }
  h.labels = LabelSet::Of(s.labels());
  h.current_model = s.report_model_version() == kModelVersion;
  h.has_observed_at = s.has_observed_at();
  h.observed_at_nanos = s.observed_at_nanos();
  h.observed_at_seconds = s.observed_at_seconds();
  h.seq = s.seq();
  h.interval_seconds = s.interval_seconds();
  h.spool_dropped_total = s.spool_dropped_total();
  if (s.has_calibration()) {
    CalibratedConstants k;
    k.c_visit_seconds = s.calibration().c_visit_seconds();
    k.fixed_seconds = s.calibration().fixed_seconds();
    k.c_pass_seconds = s.calibration().c_pass_seconds();
    k.source = s.calibration().source();
    for (const auto& l : s.calibration().visit_levels()) {
      k.visit_levels.push_back({l.from_tasks(), l.factor()});
    }
    // Records from before the origin field were all the host's own.
    k.origin =
        s.calibration().origin() == v1::CONSTANTS_ORIGIN_CLASS_CALIBRATION
            ? ConstantsOrigin::kClassCalibration
            : ConstantsOrigin::kHostCalibration;
    h.calibration = std::make_shared<const CalibratedConstants>(std::move(k));
  }
  if (absl::Status st = GetPredictions(s, &h); !st.ok()) return st;
  return h;
}

}  // namespace tracehealth::server
