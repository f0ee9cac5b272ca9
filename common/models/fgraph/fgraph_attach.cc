#include "common/models/fgraph/fgraph_attach.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/enum_names.h"
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

}  // namespace

namespace {

// The use decision from feature answers already looked up (nullptr: the
// release is unknown). Points into the answers; allocates nothing.
struct UseDecision {
  bool uses_fgraph = false;
  bool release_known = true;
  const char* reason = "";
  const std::string* rows[2] = {nullptr, nullptr};
  int nrows = 0;
};

UseDecision Decide(v1::ProbeKind kind, const FeatureAnswer* on_fgraph,
                   const FeatureAnswer* entry_only) {
  UseDecision use;
  use.release_known = on_fgraph != nullptr;
  if (IsGraphTracerKind(kind)) {
    use.uses_fgraph = true;
    use.reason = "registers an fgraph user on every kernel";
    return use;
  }
  if (!IsFprobeKind(kind)) {
    use.reason = kind == v1::PROBE_KIND_KRETPROBE       ? "kretprobes use rethook, never fgraph"
                 : kind == v1::PROBE_KIND_FENTRY_FEXIT ? "BPF trampolines never use fgraph"
                                                       : "not a probe kind";
    return use;
  }
  if (on_fgraph == nullptr) {
    use.uses_fgraph = true;
    use.reason = "kernel release unknown: assumed fprobe on fgraph (worst case)";
    return use;
  }
  use.rows[use.nrows++] = &on_fgraph->row;
  if (!on_fgraph->present) {
    use.reason = "fprobe is not built on fgraph before 6.14 (rethook)";
    return use;
  }
  if (IsEntryOnlyFprobeKind(kind)) {
    use.rows[use.nrows++] = &entry_only->row;
    if (entry_only->present) {
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

}  // namespace

FgraphUse ProbeKindUsesFgraph(v1::ProbeKind kind, const KernelRelease* release,
                              const FeatureTable& table) {
  FeatureAnswer on, entry;
  if (release != nullptr) {
    on = table.Has(feature::kFprobeOnFgraph, *release);
    entry = table.Has(feature::kFprobeEntryOnlyOffFgraph, *release);
  }
  UseDecision d = Decide(kind, release ? &on : nullptr, release ? &entry : nullptr);
  FgraphUse use;
  use.uses_fgraph = d.uses_fgraph;
  use.release_known = d.release_known;
  use.reason = d.reason;
  for (int i = 0; i < d.nrows; ++i) use.feature_rows.push_back(*d.rows[i]);
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

AttachContext MakeAttachContext(const v1::HostSnapshot& snapshot,
                                const ModelOptions& options,
                                const KernelFeatures& features) {
  AttachContext ctx;
  ctx.features = &features;
  if (options.c_visit_seconds) {
    ctx.c.c_visit = *options.c_visit_seconds;
    ctx.c_visit_overridden = true;
  }
  const v1::KernelInfo& kernel = snapshot.kernel();
  ctx.graph_config_off =
      kernel.has_config_function_graph_tracer() && !kernel.config_function_graph_tracer();
  ctx.fprobe_config_off = kernel.has_config_fprobe() && !kernel.config_fprobe();

  if (options.batch && *options.batch > 0) {
    ctx.batch = *options.batch;
    ctx.batch_source = v1::INPUT_SOURCE_OVERRIDDEN;
  } else if (features.release) {
    ctx.batch = features.retstack_batch_1024.present ? kPatchedRetstackBatch
                                                      : kDefaultRetstackBatch;
    ctx.batch_source = v1::INPUT_SOURCE_DERIVED;
  } else {
    ctx.batch = kDefaultRetstackBatch;
    ctx.batch_source = v1::INPUT_SOURCE_DEFAULT;
  }
  ctx.batch_value = absl::StrCat(ctx.batch);

  ctx.preempt = kernel.preempt_mode();
  const v1::Thresholds& t = snapshot.thresholds();
  ctx.watchdog_value = t.has_watchdog_thresh_seconds()
                           ? absl::StrCat(t.watchdog_thresh_seconds())
                           : FormatNumber(kDefaultWatchdogThreshSeconds);
  ctx.rcu_value = t.has_rcu_cpu_stall_timeout_seconds()
                      ? absl::StrCat(t.rcu_cpu_stall_timeout_seconds())
                      : FormatNumber(kDefaultRcuStallTimeoutSeconds);

  const v1::FgraphState& fg = snapshot.fgraph();
  ctx.active_known = fg.has_active();
  ctx.active = ctx.active_known && fg.active();

  ctx.threads_known = snapshot.threads().has_total();
  if (ctx.threads_known) {
    ctx.n_total = snapshot.threads().total();
    ctx.n_total_value = absl::StrCat(ctx.n_total);
    ctx.n_null = ctx.n_total;
    if (fg.has_null_threads_bound()) {
      ctx.n_null = std::min<uint64_t>(fg.null_threads_bound(), ctx.n_total);
      ctx.null_source = v1::INPUT_SOURCE_DERIVED;
      ctx.n_null_value = absl::StrCat(ctx.n_null);
    } else {
      ctx.null_source = v1::INPUT_SOURCE_DEFAULT;
      ctx.n_null_value = absl::StrCat(ctx.n_null, " (= threads.total)");
    }
    ctx.walk = ShadowStackWalk(ctx.n_total, ctx.n_null, ctx.batch);
    ctx.walk_seconds = ctx.c.c_visit * ctx.walk.visits +
                       ctx.c.c_pass * static_cast<double>(ctx.walk.passes) +
                       ctx.c.c_alloc * static_cast<double>(ctx.n_null);
  }
  if (PreemptibilityOf(ctx.preempt) != Preemptibility::kPreemptible) {
    double threshold = SoftLockupThresholdSeconds(t);
    const double rcu = RcuStallThresholdSeconds(t);
    if (threshold <= 0 || (rcu > 0 && rcu < threshold)) threshold = rcu;
    if (threshold > 0) ctx.threads_at_stall = ThreadsForWalkSeconds(threshold, ctx.batch, ctx.c);
  }
  return ctx;
}

namespace {

std::string Duration(double s) {
  if (s >= 1.0) return absl::StrCat(FormatFixed(s, 1), " s");
  if (s >= 1e-3) return absl::StrCat(FormatFixed(s * 1e3, 1), " ms");
  return absl::StrCat(FormatFixed(s * 1e6, 0), " us");
}

}  // namespace

v1::AttachPrediction PredictFgraphAttach(const v1::HostSnapshot& snapshot,
                                         v1::ProbeKind kind,
                                         const ModelOptions& options) {
  const KernelFeatures features = ResolveKernelFeatures(
      snapshot.kernel(),
      options.features != nullptr ? *options.features : FeatureTable::Builtin());
  v1::AttachPrediction out;
  PredictFgraphAttach(snapshot, kind, options, MakeAttachContext(snapshot, options, features),
                      &out);
  return out;
}

void PredictFgraphAttach(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                         const ModelOptions& options, const AttachContext& ctx,
                         v1::AttachPrediction* out_ptr) {
  ResetKeepingBasis(out_ptr);
  v1::AttachPrediction& out = *out_ptr;
  out.set_probe_kind(kind);
  v1::Basis* basis = out.mutable_basis();
  const FgraphConstants& c = ctx.c;
  const KernelFeatures& features = *ctx.features;
  int unknown_inputs = 0;

  const bool release_known = features.release.has_value();
  UseDecision use = Decide(kind, release_known ? &features.fprobe_on_fgraph : nullptr,
                           release_known ? &features.fprobe_entry_only_off_fgraph : nullptr);
  bool available = true;
  if (IsGraphTracerKind(kind) && ctx.graph_config_off) available = false;
  if (IsFprobeKind(kind) && ctx.fprobe_config_off) available = false;
  if (!available) use.uses_fgraph = false;
  if (IsFprobeKind(kind) && !use.release_known) ++unknown_inputs;
  out.set_uses_fgraph(use.uses_fgraph);
  const bool walks = use.uses_fgraph && !ctx.active;

  // Constants: the walk's only when there is a walk.
  if (walks) {
    AddConstant(basis, "c_visit", c.c_visit, "s",
                ctx.c_visit_overridden
                    ? "override"
                    : "seed 000 minimax fit over six rows (81-98 ns each), 60-core Sapphire Rapids");
    AddConstant(basis, "c_pass", c.c_pass, "s",
                "model assumption: RCU lock/unlock and loop set-up per pass");
    AddConstant(basis, "c_alloc", c.c_alloc, "s",
                "model assumption: kmem_cache_alloc fast path per 4 KiB stack");
  }
  AddConstant(basis, "c_site", c.c_site, "s",
              "model assumption: batched text_poke per patched call site");

  if (release_known) {
    AddInput(basis, "kernel.release", snapshot.kernel().release(), v1::INPUT_SOURCE_MEASURED);
  } else {
    AddNote(basis, features.release_note);
  }
  for (int i = 0; i < use.nrows; ++i) AddFeatureRow(basis, *use.rows[i]);
  absl::StrAppend(NewNote(basis), ProbeKindName(kind), ": ", use.reason);
  if (!available) {
    AddNote(basis, IsGraphTracerKind(kind)
                       ? "CONFIG_FUNCTION_GRAPH_TRACER is off: this probe kind is unavailable"
                       : "CONFIG_FPROBE is off: this probe kind is unavailable");
  }

  // Call sites the registration patches.
  uint64_t sites = 1;
  if (options.sites) {
    sites = *options.sites;
    AddInput(basis, "sites", absl::StrCat(sites), v1::INPUT_SOURCE_OVERRIDDEN);
  } else if (IsGraphTracerKind(kind)) {
    const bool measured = snapshot.fgraph().has_available_filter_functions();
    sites = measured ? snapshot.fgraph().available_filter_functions() : kDefaultFilterFunctions;
    AddInput(basis, "fgraph.available_filter_functions", absl::StrCat(sites),
             measured ? v1::INPUT_SOURCE_MEASURED : v1::INPUT_SOURCE_DEFAULT);
  } else if (IsFprobeKind(kind)) {
    sites = kDefaultKprobeMultiSites;
    AddInput(basis, "sites", absl::StrCat(sites), v1::INPUT_SOURCE_DEFAULT);
  }
  out.set_patch_sites(sites);
  const double patch = available ? c.c_site * static_cast<double>(sites) : 0;
  out.set_patch_seconds(patch);
  out.set_batch(ctx.batch);
  out.set_fgraph_already_active(ctx.active);
  out.set_threads_total(ctx.n_total);

  StallInput stall;
  stall.preempt_mode = ctx.preempt;
  stall.latency_budget_seconds = options.latency_budget_seconds;
  const v1::Thresholds& thresholds = snapshot.thresholds();

  if (!walks) {
    // No shadow-stack walk: only the new user's registration and patching.
    if (use.uses_fgraph) {
      AddInput(basis, "fgraph.active", "true", v1::INPUT_SOURCE_MEASURED);
      AddNote(basis, "fgraph already active: every thread has a shadow stack, no walk");
    }
    out.set_null_threads(0);
    out.set_latency_seconds(patch);
    out.set_longest_pass_seconds(0);
    stall.non_yielding_seconds = 0;  // ftrace_replace_code() reschedules
    stall.blocking_seconds = patch;
    StallAssessment a = AssessStall(stall, thresholds, out.mutable_checks());
    out.set_risk(a.risk == v1::RISK_LATENCY ? v1::RISK_LATENCY : v1::RISK_NONE);
    if (!use.uses_fgraph && IsFprobeKind(kind) && !use.release_known) {
      out.set_risk(v1::RISK_UNKNOWN);
    }
    std::string* summary = out.mutable_summary();
    absl::StrAppend(summary, ProbeKindName(kind), ": ");
    if (!available) {
      absl::StrAppend(summary, "unavailable on this kernel");
    } else if (ctx.active && use.uses_fgraph) {
      absl::StrAppend(summary, "fgraph already active, no shadow-stack walk");
    } else {
      absl::StrAppend(summary, "does not use fgraph here (", use.reason, ")");
    }
    absl::StrAppend(summary, "; about ", Duration(patch), " to patch ", sites,
                    " site(s); no stall risk.");
    SetConfidence(basis, unknown_inputs);
    return;
  }

  AddInput(basis, "kernel.preempt_mode", PreemptModeConfigName(ctx.preempt),
           ctx.preempt == v1::PREEMPT_MODE_UNKNOWN ? v1::INPUT_SOURCE_DEFAULT
                                                   : v1::INPUT_SOURCE_MEASURED);
  AddInput(basis, "thresholds.watchdog_thresh", ctx.watchdog_value,
           thresholds.has_watchdog_thresh_seconds() ? v1::INPUT_SOURCE_MEASURED
                                                    : v1::INPUT_SOURCE_DEFAULT);
  AddInput(basis, "thresholds.rcu_cpu_stall_timeout", ctx.rcu_value,
           thresholds.has_rcu_cpu_stall_timeout_seconds() ? v1::INPUT_SOURCE_MEASURED
                                                          : v1::INPUT_SOURCE_DEFAULT);
  AddInput(basis, "batch", ctx.batch_value, ctx.batch_source);
  if (ctx.batch_source == v1::INPUT_SOURCE_DERIVED) {
    AddFeatureRow(basis, features.retstack_batch_1024.row);
  }
  AddInput(basis, "fgraph.active", ctx.active_known ? "false" : "unknown (assumed false)",
           ctx.active_known ? v1::INPUT_SOURCE_MEASURED : v1::INPUT_SOURCE_DEFAULT);

  if (!ctx.threads_known) {
    ++unknown_inputs;
    AddNote(basis, "threads.total unknown: walk cost cannot be predicted");
    out.set_latency_seconds(patch);
    out.set_risk(v1::RISK_UNKNOWN);
    absl::StrAppend(out.mutable_summary(), ProbeKindName(kind),
                    ": walks every thread's shadow stack, but the thread count is unknown.");
    SetConfidence(basis, unknown_inputs);
    return;
  }
  AddInput(basis, "threads.total", ctx.n_total_value, v1::INPUT_SOURCE_MEASURED);
  AddInput(basis, "fgraph.null_threads_bound", ctx.n_null_value, ctx.null_source);
  if (ctx.null_source == v1::INPUT_SOURCE_DEFAULT) {
    AddNote(basis, "N_null assumed = N_total (fgraph never active since boot)");
  } else if (!snapshot.fgraph().null_threads_basis().empty()) {
    absl::StrAppend(NewNote(basis), "N_null: ", snapshot.fgraph().null_threads_basis());
  }

  out.set_null_threads(ctx.n_null);
  out.set_passes(ctx.walk.passes);
  out.set_visits(ctx.walk.visits);
  out.set_walk_seconds(ctx.walk_seconds);
  out.set_latency_seconds(ctx.walk_seconds + patch);
  out.set_longest_pass_seconds(c.c_visit * static_cast<double>(ctx.n_total));

  // The walk never reschedules; the patching loop does (cond_resched in
  // ftrace_replace_code), so only the walk counts against the watchdogs.
  stall.non_yielding_seconds = ctx.walk_seconds;
  stall.blocking_seconds = ctx.walk_seconds + patch;
  StallAssessment a = AssessStall(stall, thresholds, out.mutable_checks());
  out.set_risk(a.risk);
  if (!use.release_known && out.risk() != v1::RISK_NONE) out.set_risk(v1::RISK_UNKNOWN);

  // Inverse predictions.
  if (ctx.threads_at_stall) out.set_threads_at_stall(*ctx.threads_at_stall);
  if (options.latency_budget_seconds) {
    out.set_threads_at_latency_budget(
        ThreadsForWalkSeconds(*options.latency_budget_seconds - patch, ctx.batch, c));
  }

  std::string* summary = out.mutable_summary();
  absl::StrAppend(summary, ProbeKindName(kind), ": first attach walks ", ctx.n_total,
                  " threads (", ctx.n_null, " without a shadow stack) in ", ctx.walk.passes,
                  " passes of ", ctx.batch, ": about ", Duration(out.latency_seconds()),
                  " blocked; ");
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
      absl::StrAppend(summary, out.risk() == v1::RISK_STALL ? "predicts a " : "close to a ",
                      worst ? CheckKindName(worst->kind()) : "stall", " (",
                      PreemptModeConfigName(ctx.preempt), ", ", FormatFixed(worst ? worst->margin() : 0.0, 2),
                      "x the ", FormatFixed(worst ? worst->threshold() : 0.0, 0), " s threshold)");
      if (out.has_threads_at_stall()) {
        absl::StrAppend(summary, "; stays below it under ", FormatFixed(out.threads_at_stall(), 0),
                        " NULL-stack threads");
      }
      break;
    }
    case v1::RISK_UNKNOWN:
      absl::StrAppend(summary, use.release_known
                                   ? "a non-preemptible kernel would stall; preemption mode unknown"
                                   : "kernel release unknown, worst case shown");
      break;
    default:
      if (PreemptibilityOf(ctx.preempt) == Preemptibility::kPreemptible) {
        absl::StrAppend(summary, "latency only (", PreemptModeConfigName(ctx.preempt), ")");
      } else {
        absl::StrAppend(summary, "no stall expected");
      }
  }
  absl::StrAppend(summary, ".");
  SetConfidence(basis, unknown_inputs);
}

}  // namespace tracehealth
