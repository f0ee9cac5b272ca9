#include "common/models/fgraph/fgraph_attach.h"

#include <algorithm>
#include <cmath>

#include "common/models/basis.h"
#include "common/models/risk.h"

namespace tracehealth {

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

bool IsEntryOnlyFprobeKind(v1::ProbeKind kind) {
  return kind == v1::PROBE_KIND_KPROBE_MULTI ||
         kind == v1::PROBE_KIND_FPROBE_EVENT;
}

FgraphUse DecideFgraphUse(v1::ProbeKind kind, const KernelFeatures& features) {
  FgraphUse use;
  use.release_known = features.release.has_value();
  auto decide = [&use](FgraphUseRule rule, bool uses) {
    use.rule = rule;
    use.uses_fgraph = uses;
    return use;
  };
  if (IsGraphTracerKind(kind)) return decide(FgraphUseRule::kGraphTracer, true);
  if (kind == v1::PROBE_KIND_KRETPROBE)
    return decide(FgraphUseRule::kKretprobe, false);
  if (kind == v1::PROBE_KIND_FENTRY_FEXIT)
    return decide(FgraphUseRule::kTrampoline, false);
  if (!IsFprobeKind(kind)) return decide(FgraphUseRule::kNotAProbe, false);
  if (!use.release_known) return decide(FgraphUseRule::kReleaseUnknown, true);
  // fprobe sits on fgraph from 6.14 (fprobe_on_fgraph) ...
  use.rows[use.nrows++] = &features.fprobe_on_fgraph;
  if (!features.fprobe_on_fgraph.present)
    return decide(FgraphUseRule::kFprobeOnRethook, false);
  if (!IsEntryOnlyFprobeKind(kind))
    return decide(FgraphUseRule::kExitHandler, true);
  // ... and entry-only users leave it again (fprobe_entry_only_off_fgraph).
  use.rows[use.nrows++] = &features.fprobe_entry_only_off_fgraph;
  if (features.fprobe_entry_only_off_fgraph.present) {
    return decide(FgraphUseRule::kEntryOnlyOffFgraph, false);
  }
  return decide(FgraphUseRule::kEveryFprobe, true);
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

namespace {

v1::InputSource MeasuredIf(bool measured) {
  return measured ? v1::INPUT_SOURCE_MEASURED : v1::INPUT_SOURCE_DEFAULT;
}

// A what-if value, else where the host's value came from.
v1::InputSource SourceOf(bool overridden, v1::InputSource host) {
  return overridden ? v1::INPUT_SOURCE_OVERRIDDEN : host;
}

}  // namespace

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
  ctx.graph_config_off = kernel.has_config_function_graph_tracer() &&
                         !kernel.config_function_graph_tracer();
  ctx.fprobe_config_off = kernel.has_config_fprobe() && !kernel.config_fprobe();

  // B: the what-if, else the release's (retstack_batch_1024), else 32.
  if (options.batch && *options.batch > 0) {
    ctx.batch = *options.batch;
    ctx.batch_source = v1::INPUT_SOURCE_OVERRIDDEN;
  } else if (features.release) {
    ctx.batch = features.retstack_batch_1024.present ? kPatchedRetstackBatch
                                                     : kDefaultRetstackBatch;
    ctx.batch_source = v1::INPUT_SOURCE_DERIVED;
  }
  ctx.preempt = kernel.preempt_mode();

  const v1::FgraphState& fg = snapshot.fgraph();
  ctx.active_known = fg.has_active();
  ctx.active = ctx.active_known && fg.active();

  // N_total from the host; N_null = N_total unless the agent bounded it.
  ctx.threads_known = snapshot.threads().has_total();
  if (ctx.threads_known) {
    ctx.n_total = snapshot.threads().total();
    ctx.n_null = ctx.n_total;
    if (fg.has_null_threads_bound()) {
      ctx.n_null = std::min<uint64_t>(fg.null_threads_bound(), ctx.n_total);
      ctx.null_source =
          SourceOf(options.overridden.null_threads, v1::INPUT_SOURCE_DERIVED);
    }
    ctx.walk = ShadowStackWalk(ctx.n_total, ctx.n_null, ctx.batch);
    // c_visit · V + c_pass · P + c_alloc · N_null
    ctx.walk_seconds = ctx.c.c_visit * ctx.walk.visits +
                       ctx.c.c_pass * static_cast<double>(ctx.walk.passes) +
                       ctx.c.c_alloc * static_cast<double>(ctx.n_null);
  }
  // Inverse: the NULL-thread count whose walk reaches the lower of the
  // soft-lockup and RCU-stall thresholds (a non-preemptible kernel only).
  if (PreemptibilityOf(ctx.preempt) != Preemptibility::kPreemptible) {
    const v1::Thresholds& t = snapshot.thresholds();
    double threshold = SoftLockupThresholdSeconds(t);
    const double rcu = RcuStallThresholdSeconds(t);
    if (threshold <= 0 || (rcu > 0 && rcu < threshold)) threshold = rcu;
    if (threshold > 0)
      ctx.threads_at_stall = ThreadsForWalkSeconds(threshold, ctx.batch, ctx.c);
  }
  return ctx;
}

AttachCase MakeAttachCase(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                          const ModelOptions& options,
                          const AttachContext& ctx) {
  AttachCase k;
  k.kind = kind;
  k.use = DecideFgraphUse(kind, *ctx.features);
  if (IsGraphTracerKind(kind) && ctx.graph_config_off) k.available = false;
  if (IsFprobeKind(kind) && ctx.fprobe_config_off) k.available = false;
  if (!k.available) k.use.uses_fgraph = false;
  if (IsFprobeKind(kind) && !k.use.release_known) ++k.unknown_inputs;
  k.walks = k.use.uses_fgraph && !ctx.active;

  AttachInputs& in = k.inputs;
  const OverriddenInputs& what_if = options.overridden;
  if (k.use.release_known) {
    in.Add(AttachInput::kRelease,
           SourceOf(what_if.kernel_release, v1::INPUT_SOURCE_MEASURED));
  }
  // sites: the what-if; every traceable function for the graph tracers; a
  // typical kprobe_multi count for fprobes; one for the others.
  const v1::FgraphState& fg = snapshot.fgraph();
  if (options.sites) {
    k.sites = *options.sites;
    in.Add(AttachInput::kSites, v1::INPUT_SOURCE_OVERRIDDEN);
  } else if (IsGraphTracerKind(kind)) {
    const bool measured = fg.has_available_filter_functions();
    k.sites =
        measured ? fg.available_filter_functions() : kDefaultFilterFunctions;
    in.Add(AttachInput::kFilterFunctions, MeasuredIf(measured));
  } else if (IsFprobeKind(kind)) {
    k.sites = kDefaultKprobeMultiSites;
    in.Add(AttachInput::kSites, v1::INPUT_SOURCE_DEFAULT);
  }
  if (!k.walks) {
    if (k.use.uses_fgraph) {
      in.Add(AttachInput::kFgraphActive,
             SourceOf(what_if.fgraph_active, v1::INPUT_SOURCE_MEASURED));
    }
    return k;
  }
  const v1::Thresholds& t = snapshot.thresholds();
  in.Add(AttachInput::kPreemptMode,
         SourceOf(what_if.preempt_mode,
                  MeasuredIf(ctx.preempt != v1::PREEMPT_MODE_UNKNOWN)));
  in.Add(AttachInput::kWatchdogThresh,
         MeasuredIf(t.has_watchdog_thresh_seconds()));
  in.Add(AttachInput::kRcuStallTimeout,
         MeasuredIf(t.has_rcu_cpu_stall_timeout_seconds()));
  in.Add(AttachInput::kBatch, ctx.batch_source);
  in.Add(AttachInput::kFgraphActive,
         SourceOf(what_if.fgraph_active, MeasuredIf(ctx.active_known)));
  if (!ctx.threads_known) {
    ++k.unknown_inputs;
    return k;
  }
  in.Add(AttachInput::kThreadsTotal,
         SourceOf(what_if.threads, v1::INPUT_SOURCE_MEASURED));
  in.Add(AttachInput::kNullThreads, ctx.null_source);
  return k;
}

v1::AttachPrediction PredictFgraphAttach(const v1::HostSnapshot& snapshot,
                                         v1::ProbeKind kind,
                                         const ModelOptions& options) {
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), options);
  v1::AttachPrediction out;
  PredictFgraphAttach(snapshot, kind, options,
                      MakeAttachContext(snapshot, options, features), &out);
  return out;
}

void PredictFgraphAttach(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                         const ModelOptions& options, const AttachContext& ctx,
                         v1::AttachPrediction* out) {
  PredictFgraphAttach(snapshot, options, ctx,
                      MakeAttachCase(snapshot, kind, options, ctx), out);
}

void PredictFgraphAttach(const v1::HostSnapshot& snapshot,
                         const ModelOptions& options, const AttachContext& ctx,
                         const AttachCase& k, v1::AttachPrediction* out_ptr) {
  ResetKeepingBasis(out_ptr);
  v1::AttachPrediction& out = *out_ptr;
  const v1::ProbeKind kind = k.kind;
  const FgraphConstants& c = ctx.c;
  out.set_probe_kind(kind);
  out.set_uses_fgraph(k.use.uses_fgraph);
  out.set_fgraph_already_active(ctx.active);
  out.set_threads_total(ctx.n_total);
  out.set_batch(ctx.batch);
  out.set_patch_sites(k.sites);
  // Patching: c_site · sites.
  const double patch =
      k.available ? c.c_site * static_cast<double>(k.sites) : 0;
  out.set_patch_seconds(patch);

  StallInput stall;
  stall.preempt_mode = ctx.preempt;
  stall.latency_budget_seconds = options.latency_budget_seconds;
  const v1::Thresholds& thresholds = snapshot.thresholds();
  if (!k.walks) {
    // Only the new user's registration and patching, and
    // ftrace_replace_code() reschedules: never a stall.
    out.set_latency_seconds(patch);
    stall.non_yielding_seconds = 0;
    stall.blocking_seconds = patch;
    const StallAssessment a =
        AssessStall(stall, thresholds, out.mutable_checks());
    out.set_risk(a.risk == v1::RISK_LATENCY ? v1::RISK_LATENCY : v1::RISK_NONE);
    if (!k.use.uses_fgraph && IsFprobeKind(kind) && !k.use.release_known) {
      out.set_risk(v1::RISK_UNKNOWN);
    }
  } else if (!ctx.threads_known) {
    // A walk of unknown length.
    out.set_latency_seconds(patch);
    out.set_risk(v1::RISK_UNKNOWN);
  } else {
    // T = c_visit · V + c_pass · P + c_alloc · N_null + c_site · sites
    out.set_null_threads(ctx.n_null);
    out.set_passes(ctx.walk.passes);
    out.set_visits(ctx.walk.visits);
    out.set_walk_seconds(ctx.walk_seconds);
    out.set_latency_seconds(ctx.walk_seconds + patch);
    // The longest RCU read-side section is one pass: c_visit · N_total.
    out.set_longest_pass_seconds(c.c_visit * static_cast<double>(ctx.n_total));
    // The walk never reschedules; the patching loop does (cond_resched in
    // ftrace_replace_code), so only the walk counts against the watchdogs.
    stall.non_yielding_seconds = ctx.walk_seconds;
    stall.blocking_seconds = ctx.walk_seconds + patch;
    const StallAssessment a =
        AssessStall(stall, thresholds, out.mutable_checks());
    out.set_risk(a.risk);
    if (!k.use.release_known && out.risk() != v1::RISK_NONE)
      out.set_risk(v1::RISK_UNKNOWN);
    // Inverse predictions.
    if (ctx.threads_at_stall) out.set_threads_at_stall(*ctx.threads_at_stall);
    if (options.latency_budget_seconds) {
      out.set_threads_at_latency_budget(ThreadsForWalkSeconds(
          *options.latency_budget_seconds - patch, ctx.batch, c));
    }
  }
  out.mutable_basis()->set_confidence(
      Confidence(k.inputs.Defaults(), k.unknown_inputs));
}

}  // namespace tracehealth
