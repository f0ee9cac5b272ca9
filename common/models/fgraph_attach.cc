#include "common/models/fgraph_attach.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/models/basis.h"
#include "common/models/risk.h"

namespace tracehealth {
namespace {

bool IsGraphTracerKind(v1::ProbeKind kind) {
  return kind == v1::PROBE_KIND_FUNCTION_GRAPH_TRACER ||
         kind == v1::PROBE_KIND_FUNCTION_PROFILER ||
         kind == v1::PROBE_KIND_GRAPH_LATENCY_TRACER;
}

bool IsFprobeKind(v1::ProbeKind kind) {
  return kind == v1::PROBE_KIND_KPROBE_MULTI ||
         kind == v1::PROBE_KIND_KPROBE_MULTI_RETURN ||
         kind == v1::PROBE_KIND_KPROBE_SESSION ||
         kind == v1::PROBE_KIND_FPROBE_EVENT ||
         kind == v1::PROBE_KIND_FPROBE_RETURN_EVENT;
}

// fprobe users without an exit handler.
bool IsEntryOnlyFprobeKind(v1::ProbeKind kind) {
  return kind == v1::PROBE_KIND_KPROBE_MULTI ||
         kind == v1::PROBE_KIND_FPROBE_EVENT;
}

std::string Seconds(double s) {
  if (s >= 1.0) return absl::StrFormat("%.1f s", s);
  if (s >= 1e-3) return absl::StrFormat("%.1f ms", s * 1e3);
  return absl::StrFormat("%.0f us", s * 1e6);
}

}  // namespace

const char* ProbeKindName(v1::ProbeKind kind) {
  switch (kind) {
    case v1::PROBE_KIND_FUNCTION_GRAPH_TRACER:
      return "function_graph tracer";
    case v1::PROBE_KIND_FUNCTION_PROFILER:
      return "function profiler";
    case v1::PROBE_KIND_GRAPH_LATENCY_TRACER:
      return "graph latency tracer";
    case v1::PROBE_KIND_KPROBE_MULTI:
      return "kprobe_multi";
    case v1::PROBE_KIND_KPROBE_MULTI_RETURN:
      return "kprobe_multi return";
    case v1::PROBE_KIND_KPROBE_SESSION:
      return "kprobe session";
    case v1::PROBE_KIND_FPROBE_EVENT:
      return "fprobe event";
    case v1::PROBE_KIND_FPROBE_RETURN_EVENT:
      return "fprobe %return event";
    case v1::PROBE_KIND_KRETPROBE:
      return "kretprobe";
    case v1::PROBE_KIND_FENTRY_FEXIT:
      return "fentry/fexit";
    default:
      return "unspecified probe";
  }
}

FgraphUse ProbeKindUsesFgraph(v1::ProbeKind kind, const KernelRelease* release,
                              const FeatureTable& table) {
  FgraphUse use;
  use.release_known = release != nullptr;
  if (IsGraphTracerKind(kind)) {
    use.uses_fgraph = true;
    use.reason = "registers an fgraph user on every kernel";
    return use;
  }
  if (!IsFprobeKind(kind)) {
    use.uses_fgraph = false;
    use.reason = kind == v1::PROBE_KIND_KRETPROBE
                     ? "kretprobes use rethook, never fgraph"
                     : (kind == v1::PROBE_KIND_FENTRY_FEXIT
                            ? "BPF trampolines never use fgraph"
                            : "not a probe kind");
    return use;
  }
  if (release == nullptr) {
    use.uses_fgraph = true;
    use.reason = "kernel release unknown: assumed fprobe on fgraph (worst case)";
    return use;
  }
  FeatureAnswer on_fgraph = table.Has(feature::kFprobeOnFgraph, *release);
  use.feature_rows.push_back(on_fgraph.row);
  if (!on_fgraph.present) {
    use.uses_fgraph = false;
    use.reason = "fprobe is not built on fgraph before 6.14 (rethook)";
    return use;
  }
  if (IsEntryOnlyFprobeKind(kind)) {
    FeatureAnswer entry_only =
        table.Has(feature::kFprobeEntryOnlyOffFgraph, *release);
    use.feature_rows.push_back(entry_only.row);
    if (entry_only.present) {
      use.uses_fgraph = false;
      use.reason = "entry-only fprobes no longer register fgraph";
      return use;
    }
    use.uses_fgraph = true;
    use.reason = "every fprobe user registers fgraph on this kernel";
    return use;
  }
  use.uses_fgraph = true;
  use.reason = "fprobes with an exit handler register fgraph";
  return use;
}

WalkCost ShadowStackWalk(uint64_t n_total, uint64_t n_null, uint32_t batch) {
  WalkCost cost;
  if (batch == 0) batch = 1;
  n_null = std::min(n_null, n_total);
  const double total = static_cast<double>(n_total);
  if (n_null == 0) {
    // start_graph_tracing() runs alloc_retstack_tasklist() at least once.
    cost.passes = 1;
    cost.visits = total;
    return cost;
  }
  const uint64_t fill_passes = (n_null + batch - 1) / batch;
  const bool empty_pass = n_null % batch == 0 && n_null < n_total;
  // Passes that stop early: every filling pass except the last one, or all
  // of them when an empty pass follows.
  const uint64_t early = empty_pass ? fill_passes : fill_passes - 1;
  const double density = total / static_cast<double>(n_null);
  // sum_{i=0}^{early-1} ((i+1)*B*density + 1)
  const double e = static_cast<double>(early);
  cost.visits = static_cast<double>(batch) * density * e * (e + 1) / 2.0 + e;
  cost.visits += total;  // the pass that reaches the end of the list
  cost.passes = fill_passes + (empty_pass ? 1 : 0);
  return cost;
}

double WalkSecondsAllNull(double threads, uint32_t batch,
                          const FgraphConstants& c) {
  const double b = batch == 0 ? 1.0 : static_cast<double>(batch);
  return c.c_visit * (threads * threads / (2 * b) + threads / 2) +
         c.c_pass * threads / b + c.c_alloc * threads;
}

double ThreadsForWalkSeconds(double seconds, uint32_t batch,
                             const FgraphConstants& c) {
  if (seconds <= 0) return 0;
  const double b = batch == 0 ? 1.0 : static_cast<double>(batch);
  const double qa = c.c_visit / (2 * b);
  const double qb = c.c_visit / 2 + c.c_pass / b + c.c_alloc;
  // qa*N^2 + qb*N - seconds = 0, positive root.
  return (-qb + std::sqrt(qb * qb + 4 * qa * seconds)) / (2 * qa);
}

v1::AttachPrediction PredictFgraphAttach(const v1::HostSnapshot& snapshot,
                                         v1::ProbeKind kind,
                                         const ModelOptions& options) {
  v1::AttachPrediction out;
  out.set_probe_kind(kind);
  v1::Basis* basis = out.mutable_basis();
  const FeatureTable& table =
      options.features != nullptr ? *options.features : FeatureTable::Builtin();
  int unknown_inputs = 0;

  FgraphConstants c;
  if (options.c_visit_seconds) {
    c.c_visit = *options.c_visit_seconds;
    AddConstant(basis, "c_visit", c.c_visit, "s", "override");
  } else {
    AddConstant(basis, "c_visit", c.c_visit, "s",
                "seed 000 minimax fit over six rows (81-98 ns each), 60-core Sapphire Rapids");
  }
  AddConstant(basis, "c_pass", c.c_pass, "s",
              "model assumption: RCU lock/unlock and loop set-up per pass");
  AddConstant(basis, "c_alloc", c.c_alloc, "s",
              "model assumption: kmem_cache_alloc fast path per 4 KiB stack");
  AddConstant(basis, "c_site", c.c_site, "s",
              "model assumption: batched text_poke per patched call site");

  // Kernel release.
  std::optional<KernelRelease> release;
  if (snapshot.kernel().has_release()) {
    absl::StatusOr<KernelRelease> parsed =
        ParseKernelRelease(snapshot.kernel().release());
    if (parsed.ok()) {
      release = *parsed;
      AddInput(basis, "kernel.release", snapshot.kernel().release(),
               v1::INPUT_SOURCE_MEASURED);
    } else {
      AddNote(basis, absl::StrCat("kernel release unparsable: ",
                                  parsed.status().message()));
    }
  }
  if (!release) {
    AddNote(basis, "kernel release unknown");
  }

  FgraphUse use = ProbeKindUsesFgraph(kind, release ? &*release : nullptr, table);
  for (const std::string& row : use.feature_rows) AddFeatureRow(basis, row);
  AddNote(basis, absl::StrCat(ProbeKindName(kind), ": ", use.reason));
  bool available = true;
  if (IsGraphTracerKind(kind) && snapshot.kernel().has_config_function_graph_tracer() &&
      !snapshot.kernel().config_function_graph_tracer()) {
    available = false;
    AddNote(basis, "CONFIG_FUNCTION_GRAPH_TRACER is off: this probe kind is unavailable");
  }
  if (IsFprobeKind(kind) && snapshot.kernel().has_config_fprobe() &&
      !snapshot.kernel().config_fprobe()) {
    available = false;
    AddNote(basis, "CONFIG_FPROBE is off: this probe kind is unavailable");
  }
  if (!available) use.uses_fgraph = false;
  if (IsFprobeKind(kind) && !use.release_known) ++unknown_inputs;
  out.set_uses_fgraph(use.uses_fgraph);

  // Call sites the registration patches.
  uint64_t sites = 1;
  if (options.sites) {
    sites = *options.sites;
    AddInput(basis, "sites", absl::StrCat(sites), v1::INPUT_SOURCE_OVERRIDDEN);
  } else if (IsGraphTracerKind(kind)) {
    if (snapshot.fgraph().has_available_filter_functions()) {
      sites = snapshot.fgraph().available_filter_functions();
      AddInput(basis, "fgraph.available_filter_functions", absl::StrCat(sites),
               v1::INPUT_SOURCE_MEASURED);
    } else {
      sites = kDefaultFilterFunctions;
      AddInput(basis, "fgraph.available_filter_functions", absl::StrCat(sites),
               v1::INPUT_SOURCE_DEFAULT);
    }
  } else if (IsFprobeKind(kind)) {
    sites = kDefaultKprobeMultiSites;
    AddInput(basis, "sites", absl::StrCat(sites), v1::INPUT_SOURCE_DEFAULT);
  }
  out.set_patch_sites(sites);
  out.set_patch_seconds(available ? c.c_site * static_cast<double>(sites) : 0);

  // Preemption mode and thresholds.
  const v1::PreemptMode preempt = snapshot.kernel().preempt_mode();
  AddInput(basis, "kernel.preempt_mode", PreemptModeName(preempt),
           preempt == v1::PREEMPT_MODE_UNKNOWN ? v1::INPUT_SOURCE_DEFAULT
                                               : v1::INPUT_SOURCE_MEASURED);
  const v1::Thresholds& thresholds = snapshot.thresholds();
  AddInput(basis, "thresholds.watchdog_thresh",
           thresholds.has_watchdog_thresh_seconds()
               ? absl::StrCat(thresholds.watchdog_thresh_seconds())
               : FormatNumber(kDefaultWatchdogThreshSeconds),
           thresholds.has_watchdog_thresh_seconds() ? v1::INPUT_SOURCE_MEASURED
                                                    : v1::INPUT_SOURCE_DEFAULT);
  AddInput(basis, "thresholds.rcu_cpu_stall_timeout",
           thresholds.has_rcu_cpu_stall_timeout_seconds()
               ? absl::StrCat(thresholds.rcu_cpu_stall_timeout_seconds())
               : FormatNumber(kDefaultRcuStallTimeoutSeconds),
           thresholds.has_rcu_cpu_stall_timeout_seconds()
               ? v1::INPUT_SOURCE_MEASURED
               : v1::INPUT_SOURCE_DEFAULT);

  // Batch.
  uint32_t batch = kDefaultRetstackBatch;
  if (options.batch && *options.batch > 0) {
    batch = *options.batch;
    AddInput(basis, "batch", absl::StrCat(batch), v1::INPUT_SOURCE_OVERRIDDEN);
  } else if (release) {
    FeatureAnswer b1024 = table.Has(feature::kRetstackBatch1024, *release);
    AddFeatureRow(basis, b1024.row);
    batch = b1024.present ? kPatchedRetstackBatch : kDefaultRetstackBatch;
    AddInput(basis, "batch", absl::StrCat(batch), v1::INPUT_SOURCE_DERIVED);
  } else {
    AddInput(basis, "batch", absl::StrCat(batch), v1::INPUT_SOURCE_DEFAULT);
  }
  out.set_batch(batch);

  // fgraph state.
  const v1::FgraphState& fg = snapshot.fgraph();
  const bool active_known = fg.has_active();
  const bool active = active_known && fg.active();
  out.set_fgraph_already_active(active);
  AddInput(basis, "fgraph.active",
           active_known ? (active ? "true" : "false") : "unknown (assumed false)",
           active_known ? v1::INPUT_SOURCE_MEASURED : v1::INPUT_SOURCE_DEFAULT);

  // Threads.
  const bool threads_known = snapshot.threads().has_total();
  uint64_t n_total = 0;
  if (threads_known) {
    n_total = snapshot.threads().total();
    AddInput(basis, "threads.total", absl::StrCat(n_total),
             v1::INPUT_SOURCE_MEASURED);
  }
  out.set_threads_total(n_total);

  const double patch = out.patch_seconds();
  StallInput stall;
  stall.preempt_mode = preempt;
  stall.latency_budget_seconds = options.latency_budget_seconds;

  if (!use.uses_fgraph || active) {
    // No shadow-stack walk: only the new user's registration and patching.
    out.set_null_threads(0);
    out.set_latency_seconds(patch);
    out.set_longest_pass_seconds(0);
    if (active) {
      AddNote(basis, "fgraph already active: every thread has a shadow stack, no walk");
    }
    stall.non_yielding_seconds = 0;  // ftrace_replace_code() reschedules
    stall.blocking_seconds = patch;
    StallAssessment a = AssessStall(stall, thresholds);
    for (auto& check : a.checks) *out.add_checks() = check;
    out.set_risk(a.risk == v1::RISK_LATENCY ? v1::RISK_LATENCY : v1::RISK_NONE);
    if (!use.uses_fgraph && IsFprobeKind(kind) && !use.release_known) {
      out.set_risk(v1::RISK_UNKNOWN);
    }
    std::string what = !available ? "unavailable on this kernel"
                       : active   ? "fgraph already active, no shadow-stack walk"
                                  : absl::StrCat("does not use fgraph here (", use.reason, ")");
    out.set_summary(absl::StrCat(ProbeKindName(kind), ": ", what, "; about ",
                                 Seconds(patch), " to patch ", sites,
                                 " site(s); no stall risk."));
    SetConfidence(basis, unknown_inputs);
    return out;
  }

  if (!threads_known) {
    ++unknown_inputs;
    AddNote(basis, "threads.total unknown: walk cost cannot be predicted");
    out.set_latency_seconds(patch);
    out.set_risk(v1::RISK_UNKNOWN);
    out.set_summary(absl::StrCat(ProbeKindName(kind),
                                 ": walks every thread's shadow stack, but the "
                                 "thread count is unknown."));
    SetConfidence(basis, unknown_inputs);
    return out;
  }

  uint64_t n_null = n_total;
  if (fg.has_null_threads_bound()) {
    n_null = std::min<uint64_t>(fg.null_threads_bound(), n_total);
    AddInput(basis, "fgraph.null_threads_bound", absl::StrCat(n_null),
             v1::INPUT_SOURCE_DERIVED);
    if (!fg.null_threads_basis().empty()) {
      AddNote(basis, absl::StrCat("N_null: ", fg.null_threads_basis()));
    }
  } else {
    AddInput(basis, "fgraph.null_threads_bound",
             absl::StrCat(n_null, " (= threads.total)"), v1::INPUT_SOURCE_DEFAULT);
    AddNote(basis, "N_null assumed = N_total (fgraph never active since boot)");
  }
  out.set_null_threads(n_null);

  WalkCost walk = ShadowStackWalk(n_total, n_null, batch);
  out.set_passes(walk.passes);
  out.set_visits(walk.visits);
  const double walk_seconds = c.c_visit * walk.visits +
                              c.c_pass * static_cast<double>(walk.passes) +
                              c.c_alloc * static_cast<double>(n_null);
  out.set_walk_seconds(walk_seconds);
  out.set_latency_seconds(walk_seconds + patch);
  out.set_longest_pass_seconds(c.c_visit * static_cast<double>(n_total));

  // The walk never reschedules; the patching loop does (cond_resched in
  // ftrace_replace_code), so only the walk counts against the watchdogs.
  stall.non_yielding_seconds = walk_seconds;
  stall.blocking_seconds = walk_seconds + patch;
  StallAssessment a = AssessStall(stall, thresholds);
  for (auto& check : a.checks) *out.add_checks() = check;
  out.set_risk(a.risk);
  if (!use.release_known && out.risk() != v1::RISK_NONE) out.set_risk(v1::RISK_UNKNOWN);

  // Inverse predictions.
  if (PreemptibilityOf(preempt) != Preemptibility::kPreemptible) {
    double threshold = SoftLockupThresholdSeconds(thresholds);
    const double rcu = RcuStallThresholdSeconds(thresholds);
    if (threshold <= 0 || (rcu > 0 && rcu < threshold)) threshold = rcu;
    if (threshold > 0) {
      out.set_threads_at_stall(ThreadsForWalkSeconds(threshold, batch, c));
    }
  }
  if (options.latency_budget_seconds) {
    out.set_threads_at_latency_budget(
        ThreadsForWalkSeconds(*options.latency_budget_seconds - patch, batch, c));
  }

  std::string verdict;
  switch (out.risk()) {
    case v1::RISK_STALL:
    case v1::RISK_WARNING: {
      const v1::ThresholdCheck* worst = nullptr;
      for (const auto& check : out.checks()) {
        if (check.applies() && check.kind() != v1::ThresholdCheck::KIND_LATENCY &&
            (worst == nullptr || check.margin() > worst->margin())) {
          worst = &check;
        }
      }
      verdict = absl::StrFormat(
          "%s %s (%s, %.2fx the %.0f s threshold)",
          out.risk() == v1::RISK_STALL ? "predicts a" : "close to a",
          worst ? CheckKindName(worst->kind()) : "stall", PreemptModeName(preempt),
          worst ? worst->margin() : 0.0, worst ? worst->threshold() : 0.0);
      if (out.has_threads_at_stall()) {
        absl::StrAppendFormat(&verdict, "; stays below it under %.0f NULL-stack threads",
                              out.threads_at_stall());
      }
      break;
    }
    case v1::RISK_UNKNOWN:
      verdict = use.release_known
                    ? "a non-preemptible kernel would stall; preemption mode unknown"
                    : "kernel release unknown, worst case shown";
      break;
    default:
      verdict = PreemptibilityOf(preempt) == Preemptibility::kPreemptible
                    ? absl::StrCat("latency only (", PreemptModeName(preempt), ")")
                    : "no stall expected";
  }
  out.set_summary(absl::StrFormat(
      "%s: first attach walks %d threads (%d without a shadow stack) in %d "
      "passes of %d: about %s blocked; %s.",
      ProbeKindName(kind), n_total, n_null, walk.passes, batch,
      Seconds(out.latency_seconds()), verdict));
  SetConfidence(basis, unknown_inputs);
  return out;
}

}  // namespace tracehealth
