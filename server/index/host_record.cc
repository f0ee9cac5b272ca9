#include "server/index/host_record.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/kernel/feature_table_override.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/fgraph_kernel.h"
#include "server/calibration/calibrated_report.h"

namespace tracehealth::server {
namespace {

using In = AttachModelInputs;

void SetBit(uint32_t* bits, uint32_t bit, bool on) {
  if (on) *bits |= bit;
}

void Consider(
    const google::protobuf::RepeatedPtrField<v1::ThresholdCheck>& checks,
    std::optional<double>* worst) {
  for (const v1::ThresholdCheck& c : checks) {
    if (!c.applies()) continue;
    if (!worst->has_value() || c.margin() > **worst) *worst = c.margin();
  }
}

StoredAttach ToStored(const v1::AttachPrediction& a) {
  StoredAttach s;
  s.present = true;
  s.latency_seconds = a.latency_seconds();
  s.risk = a.risk();
  for (const v1::ThresholdCheck& c : a.checks()) {
    if (!c.applies()) continue;
    int i = -1;
    switch (c.kind()) {
      case v1::ThresholdCheck::KIND_SOFT_LOCKUP:
        i = kSoftLockup;
        break;
      case v1::ThresholdCheck::KIND_RCU_STALL:
        i = kRcuStall;
        break;
      case v1::ThresholdCheck::KIND_LATENCY:
        i = kLatencyBudget;
        break;
      default:
        break;
    }
    // The first check of a kind counts, as the per-host metrics had it.
    if (i < 0 || (s.applies & (1u << i)) != 0) continue;
    s.margins[i] = c.margin();
    s.applies |= static_cast<uint8_t>(1u << i);
  }
  return s;
}

}  // namespace

AttachModelInputs AttachModelInputs::Of(const v1::HostSnapshot& snapshot,
                                        KernelIdentityCache* identities) {
  In in;
  in.identity = identities != nullptr ? identities->Get(snapshot)
                                      : std::make_shared<const KernelIdentity>(
                                            KernelIdentity::Of(snapshot));
  const v1::KernelInfo& k = snapshot.kernel();
  in.preempt_mode = k.preempt_mode();
  if (k.has_preempt_dynamic()) {
    in.bits |= kHasPreemptDynamic;
    SetBit(&in.bits, kPreemptDynamic, k.preempt_dynamic());
  }
  if (k.has_page_size()) {
    in.bits |= kHasPageSize;
    in.page_size = k.page_size();
  }
  if (k.has_config_preempt_rcu()) {
    in.bits |= kHasPreemptRcu;
    SetBit(&in.bits, kPreemptRcu, k.config_preempt_rcu());
  }
  const v1::CpuInfo& cpus = snapshot.cpus();
  if (cpus.has_hypervisor()) {
    in.bits |= kHasHypervisor;
    SetBit(&in.bits, kHypervisor, cpus.hypervisor());
  }
  if (cpus.has_online()) {
    in.bits |= kHasOnlineCpus;
    in.online_cpus = cpus.online();
  }
  if (cpus.has_possible()) {
    in.bits |= kHasPossibleCpus;
    in.possible_cpus = cpus.possible();
  }
  if (cpus.has_l3_cache_bytes()) {
    in.l3_cache_bytes = static_cast<uint32_t>(std::min<uint64_t>(
        cpus.l3_cache_bytes(), std::numeric_limits<uint32_t>::max()));
  }
  if (k.has_config_function_graph_tracer()) {
    in.bits |= kHasConfigGraph;
    SetBit(&in.bits, kConfigGraph, k.config_function_graph_tracer());
  }
  if (k.has_config_fprobe()) {
    in.bits |= kHasConfigFprobe;
    SetBit(&in.bits, kConfigFprobe, k.config_fprobe());
  }
  const KernelIbt ibt = KernelIbtOf(snapshot);
  SetBit(&in.bits, kIbtKnown, ibt.known);
  SetBit(&in.bits, kIbtOn, ibt.on);
  if (snapshot.threads().has_total()) {
    in.bits |= kHasThreads;
    in.threads_total = snapshot.threads().total();
  }
  const v1::FgraphState& fg = snapshot.fgraph();
  if (fg.has_active()) {
    in.bits |= kHasFgraphActive;
    SetBit(&in.bits, kFgraphActive, fg.active());
  }
  if (fg.has_null_threads_bound()) {
    in.bits |= kHasNullBound;
    in.null_threads_bound = fg.null_threads_bound();
  }
  if (fg.has_available_filter_functions()) {
    in.bits |= kHasFilterFunctions;
    in.available_filter_functions = fg.available_filter_functions();
  }
  if (fg.has_ftrace_filter_functions()) {
    in.bits |= kHasFtraceFilter;
    in.ftrace_filter_functions = fg.ftrace_filter_functions();
  }
  const v1::Thresholds& t = snapshot.thresholds();
  if (t.has_watchdog_thresh_seconds()) {
    in.bits |= kHasWatchdogThresh;
    in.watchdog_thresh_seconds = t.watchdog_thresh_seconds();
  }
  if (t.has_softlockup_panic()) {
    in.bits |= kHasSoftlockupPanic;
    SetBit(&in.bits, kSoftlockupPanic, t.softlockup_panic());
  }
  if (t.has_rcu_cpu_stall_timeout_seconds()) {
    in.bits |= kHasRcuTimeout;
    in.rcu_cpu_stall_timeout_seconds = t.rcu_cpu_stall_timeout_seconds();
  }
  if (t.has_panic_on_rcu_stall()) {
    in.bits |= kHasPanicOnRcuStall;
    SetBit(&in.bits, kPanicOnRcuStall, t.panic_on_rcu_stall());
  }
  if (t.has_hung_task_timeout_seconds()) {
    in.bits |= kHasHungTaskTimeout;
    in.hung_task_timeout_seconds = t.hung_task_timeout_seconds();
  }
  if (t.has_hung_task_panic()) {
    in.bits |= kHasHungTaskPanic;
    SetBit(&in.bits, kHungTaskPanic, t.hung_task_panic());
  }
  return in;
}

void AttachModelInputs::Fill(v1::HostSnapshot* s) const {
  identity->Fill(s);
  FillNumbers(s);
}

void AttachModelInputs::FillNumbers(v1::HostSnapshot* s) const {
  v1::KernelInfo* k = s->mutable_kernel();
  k->set_preempt_mode(preempt_mode);
  if (has(kHasPreemptDynamic)) {
    k->set_preempt_dynamic(has(kPreemptDynamic));
  } else {
    k->clear_preempt_dynamic();
  }
  if (has(kHasPageSize)) {
    k->set_page_size(page_size);
  } else {
    k->clear_page_size();
  }
  if (has(kHasPreemptRcu)) {
    k->set_config_preempt_rcu(has(kPreemptRcu));
  } else {
    k->clear_config_preempt_rcu();
  }
  v1::CpuInfo* cpus = s->mutable_cpus();
  if (has(kHasHypervisor)) {
    cpus->set_hypervisor(has(kHypervisor));
  } else {
    cpus->clear_hypervisor();
  }
  if (has(kHasOnlineCpus)) {
    cpus->set_online(online_cpus);
  } else {
    cpus->clear_online();
  }
  if (has(kHasPossibleCpus)) {
    cpus->set_possible(possible_cpus);
  } else {
    cpus->clear_possible();
  }
  if (l3_cache_bytes > 0) {
    cpus->set_l3_cache_bytes(l3_cache_bytes);
  } else {
    cpus->clear_l3_cache_bytes();
  }
  if (has(kHasConfigGraph)) {
    k->set_config_function_graph_tracer(has(kConfigGraph));
  } else {
    k->clear_config_function_graph_tracer();
  }
  if (has(kHasConfigFprobe)) {
    k->set_config_fprobe(has(kConfigFprobe));
  } else {
    k->clear_config_fprobe();
  }
  // Known on: the build and the CPU's flag; known off: a build without it
  // (what the architecture decides stays decided); unknown: neither read.
  if (has(kIbtKnown)) {
    k->set_config_x86_kernel_ibt(has(kIbtOn));
  } else {
    k->clear_config_x86_kernel_ibt();
  }
  if (has(kIbtOn)) {
    cpus->set_ibt(true);
  } else {
    cpus->clear_ibt();
  }
  if (has(kHasThreads)) {
    s->mutable_threads()->set_total(threads_total);
  } else {
    s->mutable_threads()->clear_total();
  }
  v1::FgraphState* fg = s->mutable_fgraph();
  if (has(kHasFgraphActive)) {
    fg->set_active(has(kFgraphActive));
  } else {
    fg->clear_active();
  }
  if (has(kHasNullBound)) {
    fg->set_null_threads_bound(null_threads_bound);
  } else {
    fg->clear_null_threads_bound();
  }
  if (has(kHasFilterFunctions)) {
    fg->set_available_filter_functions(available_filter_functions);
  } else {
    fg->clear_available_filter_functions();
  }
  if (has(kHasFtraceFilter)) {
    fg->set_ftrace_filter_functions(ftrace_filter_functions);
  } else {
    fg->clear_ftrace_filter_functions();
  }
  v1::Thresholds* t = s->mutable_thresholds();
  if (has(kHasWatchdogThresh)) {
    t->set_watchdog_thresh_seconds(watchdog_thresh_seconds);
  } else {
    t->clear_watchdog_thresh_seconds();
  }
  if (has(kHasSoftlockupPanic)) {
    t->set_softlockup_panic(has(kSoftlockupPanic));
  } else {
    t->clear_softlockup_panic();
  }
  if (has(kHasRcuTimeout)) {
    t->set_rcu_cpu_stall_timeout_seconds(rcu_cpu_stall_timeout_seconds);
  } else {
    t->clear_rcu_cpu_stall_timeout_seconds();
  }
  if (has(kHasPanicOnRcuStall)) {
    t->set_panic_on_rcu_stall(has(kPanicOnRcuStall));
  } else {
    t->clear_panic_on_rcu_stall();
  }
  if (has(kHasHungTaskTimeout)) {
    t->set_hung_task_timeout_seconds(hung_task_timeout_seconds);
  } else {
    t->clear_hung_task_timeout_seconds();
  }
  if (has(kHasHungTaskPanic)) {
    t->set_hung_task_panic(has(kHungTaskPanic));
  } else {
    t->clear_hung_task_panic();
  }
}

std::optional<double> WorstMargin(const v1::Predictions& p) {
  std::optional<double> worst;
  for (const v1::AttachPrediction& a : p.attach()) Consider(a.checks(), &worst);
  Consider(p.stack_depot().checks(), &worst);
  Consider(p.vmap_purge().checks(), &worst);
  return worst;
}

const StoredAttach* HostRecord::Attach(v1::ProbeKind kind) const {
  const int i = static_cast<int>(kind) - v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
  if (i < 0 || i >= kProbeKinds || !attach[i].present) return nullptr;
  return &attach[i];
}

std::shared_ptr<const FeatureTable> FeatureTableCache::Get(
    const v1::HostReport& report) {
  if (!report.has_feature_table_override()) return nullptr;
  return Get(report.feature_table_override());
}

std::shared_ptr<const FeatureTable> FeatureTableCache::Get(
    const v1::FeatureTableOverride& override_table) {
  std::string key = override_table.SerializeAsString();
  absl::MutexLock lock(&mu_);
  auto it = tables_.find(key);
  if (it != tables_.end()) {
    if (std::shared_ptr<const FeatureTable> t = it->second.lock()) return t;
  }
  absl::StatusOr<FeatureTable> parsed =
      FeatureTableFromOverride(override_table);
  if (!parsed.ok()) return nullptr;
  auto table = std::make_shared<const FeatureTable>(*std::move(parsed));
  tables_.insert_or_assign(std::move(key), table);
  if (tables_.size() >= purge_at_) {
    // Forget the tables no record holds any more.
    absl::erase_if(tables_, [](const auto& kv) { return kv.second.expired(); });
    purge_at_ = std::max<size_t>(16, 2 * tables_.size());
  }
  return table;
}

HostRecord MakeHostRecord(const v1::HostReport& r, FeatureTableCache& tables,
                          KernelIdentityCache* identities) {
  HostRecord h;
  if (std::optional<CalibratedConstants> k = ReportCalibration(r)) {
    h.calibration = std::make_shared<const CalibratedConstants>(*std::move(k));
  }
  h.seq = r.seq();
  h.has_observed_at = r.has_observed_at();
  h.observed_at_seconds = r.observed_at().seconds();
  h.observed_at_nanos = r.observed_at().nanos();
  h.current_model = r.model_version() == kModelVersion;
  h.interval_seconds = r.interval_seconds();
  h.spool_dropped_total = r.health().spool_dropped_total();
  h.labels = LabelSet::Of(r.labels());
  h.features = tables.Get(r);
  h.inputs = AttachModelInputs::Of(r.snapshot(), identities);
  const v1::Predictions& p = r.predictions();
  h.worst_risk = p.worst_risk();
  h.worst_margin = WorstMargin(p);
  for (const v1::AttachPrediction& a : p.attach()) {
    const int i =
        static_cast<int>(a.probe_kind()) - v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
    if (i < 0 || i >= kProbeKinds || h.attach[i].present) continue;
    h.attach[i] = ToStored(a);
  }
  const v1::StackDepotPrediction& sd = p.stack_depot();
  if (sd.has_budget_ratio()) h.pool_budget_ratio = sd.budget_ratio();
  if (sd.has_seconds_to_exhaustion())
    h.seconds_to_exhaustion = sd.seconds_to_exhaustion();
  h.stack_depot_risk = sd.risk();
  const v1::VmapPurgePrediction& vp = p.vmap_purge();
  h.vmap_applies = vp.applies();
  h.purge_seconds = vp.purge_seconds();
  h.vmap_risk = vp.risk();
  for (const v1::ThresholdCheck& c : vp.checks()) {
    if (c.applies() && c.kind() == v1::ThresholdCheck::KIND_SOFT_LOCKUP &&
        !h.purge_lockup_margin.has_value()) {
      h.purge_lockup_margin = c.margin();
    }
  }
  return h;
}

}  // namespace tracehealth::server
