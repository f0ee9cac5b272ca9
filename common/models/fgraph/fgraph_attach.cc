#include "common/models/fgraph/fgraph_attach.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/models/basis.h"
#include "common/models/cpu_class.h"
#include "common/models/risk.h"

namespace tracehealth {
namespace {

v1::InputSource MeasuredIf(bool measured) {
  return measured ? v1::INPUT_SOURCE_MEASURED : v1::INPUT_SOURCE_DEFAULT;
}

// A what-if value, else where the host's value came from.
v1::InputSource SourceOf(bool overridden, v1::InputSource host) {
  return overridden ? v1::INPUT_SOURCE_OVERRIDDEN : host;
}

// The applicable stall thresholds, with the stretch each one checks.
struct Threshold {
  double seconds;
  double stretch;
  bool is_walk;
  v1::ThresholdCheck::Kind kind;
};
int StallThresholds(const Stretches& s, const v1::Thresholds& t,
                    Threshold out[2]) {
  int n = 0;
  const double soft = SoftLockupThresholdSeconds(t);
  if (soft > 0) {
    out[n++] = {soft, s.non_yielding, s.non_yielding_is_walk,
                v1::ThresholdCheck::KIND_SOFT_LOCKUP};
  }
  const double rcu = RcuStallThresholdSeconds(t);
  if (rcu > 0) {
    out[n++] = {rcu, s.no_qs, s.no_qs_is_walk,
                v1::ThresholdCheck::KIND_RCU_STALL};
  }
  return n;
}

// One pass over `tasks` tasks: c_visit * factor(tasks) * tasks + c_pass.
double OnePassSeconds(double tasks, const WalkConstants& c) {
  return c.c_visit * VisitFactor(c.levels, tasks) * tasks + c.c_pass;
}

// The fewest tasks whose one pass takes `seconds`: (seconds - c_pass) /
// c_visit without levels; with them, level by level, the first whose range
// holds (seconds - c_pass) / (c_visit * factor), or its start when the
// level's higher price already passes `seconds` there.
double OnePassThreads(double seconds, const WalkConstants& c) {
  const double need = (seconds - c.c_pass) / c.c_visit;
  double lo = 0, factor = 1;
  for (size_t i = 0; i <= c.levels.size(); ++i) {
    const double hi = i < c.levels.size()
                          ? c.levels[i].from_tasks
                          : std::numeric_limits<double>::infinity();
    const double at = need / factor;
    if (at < lo) return lo;
    if (at < hi) return at;
    if (i < c.levels.size()) {
      lo = hi;
      factor = c.levels[i].factor;
    }
  }
  return need / factor;
}

// The inverses of the first user's walk: the all-NULL thread count whose
// stretch reaches a threshold (a walk: the quadratic; a pass: c_visit * N
// + c_pass = threshold), and at this N_total the NULL threads at the tail
// whose walk does. The lowest over the thresholds; above PID_MAX_LIMIT no
// host gets there.
void Inverses(const v1::Thresholds& t, AttachContext* ctx) {
  Threshold th[2];
  const int n = StallThresholds(ctx->stretches, t, th);
  const WalkConstants& c = ctx->c;
  for (int i = 0; i < n; ++i) {
    if (th[i].stretch <= 0 && !th[i].is_walk) continue;  // nothing grows
    const double threads =
        th[i].is_walk ? ThreadsForWalkSeconds(th[i].seconds, ctx->batch, c)
                      : OnePassThreads(th[i].seconds, c);
    if (threads <= static_cast<double>(kPidMaxLimit) &&
        (!ctx->threads_at_stall || threads < *ctx->threads_at_stall)) {
      ctx->threads_at_stall = threads;
    }
    if (!th[i].is_walk || !ctx->threads_known) continue;
    const std::optional<double> null_threads =
        NullThreadsForWalkSeconds(th[i].seconds, ctx->n_total, ctx->batch, c);
    if (null_threads && (!ctx->null_threads_at_stall ||
                         *null_threads < *ctx->null_threads_at_stall)) {
      ctx->null_threads_at_stall = null_threads;
    }
  }
}

}  // namespace

AttachContext MakeAttachContext(const v1::HostSnapshot& snapshot,
                                const ModelOptions& options,
                                const KernelFeatures& features) {
  AttachContext ctx;
  ctx.features = &features;
  const v1::KernelInfo& kernel = snapshot.kernel();
  ctx.preemption = ResolvePreemption(kernel, features);
  ctx.c = WalkConstantsFor(ctx.preemption.preemption_build);
  if (options.c_visit_seconds) {
    ctx.c.c_visit = *options.c_visit_seconds;
    ctx.c_visit_overridden = true;
  } else if (options.calibration && options.calibration->c_visit_seconds > 0) {
    ctx.c.c_visit = options.calibration->c_visit_seconds;
    // The host's price of a visit by the size of the pass (its user-space
    // walk measured them with the calibration).
    ctx.c.levels = options.calibration->visit_levels;
    // The per-pass cost the calibration fitted with this c_visit (they were
    // separated together), else the assumed one.
    if (options.calibration->c_pass_seconds > 0) {
      ctx.c.c_pass = options.calibration->c_pass_seconds;
    }
    ctx.fixed_seconds = std::max(0.0, options.calibration->fixed_seconds);
    ctx.c_visit_calibrated = true;
    ctx.calibration_source = options.calibration->source;
  } else {
    // The seed's price, dearer for the passes that outgrow the L3.
    const v1::CpuInfo& cpus = snapshot.cpus();
    ctx.l3_known = cpus.has_l3_cache_bytes() && cpus.l3_cache_bytes() > 0;
    ctx.c.levels = SeedVisitLevels(
        ctx.c.c_visit, ctx.l3_known ? cpus.l3_cache_bytes() : uint64_t{0});
  }
  ctx.cpu_class = ClassifyCpu(snapshot.cpus(), ctx.preemption.preemption_build);
  ctx.ibt = KernelIbtOf(snapshot);
  // B: the what-if, else the release's (retstack_batch_1024), else 32.
  if (options.batch && *options.batch > 0) {
    ctx.batch = *options.batch;
    ctx.batch_source = v1::INPUT_SOURCE_OVERRIDDEN;
  } else if (features.release) {
    ctx.batch = features.retstack_batch_1024.present ? kPatchedRetstackBatch
                                                     : kDefaultRetstackBatch;
    ctx.batch_source = v1::INPUT_SOURCE_DERIVED;
  }
  if (features.release) {
    ctx.walk_under_rcu = features.fgraph_walk_rcu.present;
    ctx.multi_user = features.fgraph_multi_user.present;
  }
  ctx.shadow_stack_size =
      ShadowStackBytesPerThread(features, kernel.page_size());
  ctx.page_size_used = features.release && !features.shadow_stack_4k.present &&
                       features.shadow_stack_page_kmalloc.present;

  const v1::FgraphState& fg = snapshot.fgraph();
  ctx.active_known = fg.has_active();
  ctx.active = ctx.active_known && fg.active();

  // N_total from the host (at most PID_MAX_LIMIT); N_null = N_total unless
  // the agent bounded it.
  const v1::ThreadCounts& threads = snapshot.threads();
  ctx.threads_invalid = threads.has_total() && threads.total() > kPidMaxLimit;
  ctx.threads_known = threads.has_total() && !ctx.threads_invalid;
  if (ctx.threads_known) {
    ctx.n_total = threads.total();
    ctx.n_null = ctx.n_total;
    if (fg.has_null_threads_bound()) {
      ctx.n_null = std::min<uint64_t>(fg.null_threads_bound(), ctx.n_total);
      ctx.null_source =
          SourceOf(options.overridden.null_threads, v1::INPUT_SOURCE_DERIVED);
    }
    // The prediction puts the NULL threads at the tail (forked since fgraph
    // was last active: the worst case); the head gives the low end.
    ctx.walk = ShadowStackWalk(ctx.n_total, ctx.n_null, ctx.batch,
                               NullPlacement::kTail, ctx.c.levels);
    ctx.walk_low = ShadowStackWalk(ctx.n_total, ctx.n_null, ctx.batch,
                                   NullPlacement::kHead, ctx.c.levels);
    // c_visit · V + c_pass · P + c_alloc · N_null
    ctx.walk_seconds = WalkSeconds(ctx.walk, ctx.n_null, ctx.c);
    ctx.walk_seconds_low = WalkSeconds(ctx.walk_low, ctx.n_null, ctx.c);
    // One full pass: c_visit · factor(N_total) · N_total + c_pass.
    ctx.pass_seconds = OnePassSeconds(static_cast<double>(ctx.n_total), ctx.c);
  }
  ctx.stretches = WalkStretches(ctx.preemption, ctx.walk_under_rcu,
                                ctx.walk_seconds, ctx.pass_seconds);
  Inverses(snapshot.thresholds(), &ctx);
  return ctx;
}

std::optional<CVisitFactor> CVisitFactorToStall(
    const AttachContext& ctx, const Stretches& s,
    const v1::Thresholds& thresholds) {
  if (!ctx.threads_known || ctx.n_total == 0) return std::nullopt;
  Threshold th[2];
  const int n = StallThresholds(s, thresholds, th);
  std::optional<CVisitFactor> factor;
  for (int i = 0; i < n; ++i) {
    if (th[i].stretch <= 0) continue;
    // The stretch is c_visit · V plus terms that do not scale with it.
    const double n_total = static_cast<double>(ctx.n_total);
    const double visits = th[i].is_walk
                              ? ctx.walk.weighted_visits
                              : VisitFactor(ctx.c.levels, n_total) * n_total;
    const double fixed = th[i].stretch - ctx.c.c_visit * visits;
    const double f = (th[i].seconds - fixed) / (ctx.c.c_visit * visits);
    if (!factor || f < factor->factor) factor = CVisitFactor{f, th[i].kind};
  }
  return factor;
}

namespace {

// Sites: the what-if; the ftrace filter, else every traceable function,
// for the graph tracers; a typical kprobe_multi count for fprobes; one for
// the others.
void DecideSites(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                 AttachCase* k) {
  const v1::FgraphState& fg = snapshot.fgraph();
  AttachInputs& in = k->inputs;
  if (options.sites) {
    k->sites = *options.sites;
    in.Add(AttachInput::kSites, v1::INPUT_SOURCE_OVERRIDDEN);
  } else if (IsGraphTracerKind(k->kind)) {
    const bool filter_known = fg.has_ftrace_filter_functions();
    in.Add(AttachInput::kFtraceFilter, MeasuredIf(filter_known));
    if (filter_known && fg.ftrace_filter_functions() > 0) {
      k->sites = fg.ftrace_filter_functions();
    } else {
      const bool measured = fg.has_available_filter_functions();
      k->sites =
          measured ? fg.available_filter_functions() : kDefaultFilterFunctions;
      in.Add(AttachInput::kFilterFunctions, MeasuredIf(measured));
    }
  } else if (IsFprobeKind(k->kind)) {
    k->sites = kDefaultKprobeMultiSites;
    in.Add(AttachInput::kSites, v1::INPUT_SOURCE_DEFAULT);
  }
}

// The inputs of a walk (first or second user): preemption, thresholds,
// batch, threads, and the CPU the constants are applied to.
void AddWalkInputs(const v1::HostSnapshot& snapshot, const AttachContext& ctx,
                   const OverriddenInputs& what_if, AttachCase* k) {
  AttachInputs& in = k->inputs;
  const v1::KernelInfo& kernel = snapshot.kernel();
  const v1::PreemptMode given = kernel.preempt_mode();
  in.Add(AttachInput::kPreemptMode,
         SourceOf(what_if.preempt_mode,
                  MeasuredIf(given != v1::PREEMPT_MODE_UNKNOWN)));
  if (given == v1::PREEMPT_MODE_NONE || given == v1::PREEMPT_MODE_VOLUNTARY) {
    // Decides the build, hence c_visit and PREEMPT_RCU.
    in.Add(AttachInput::kPreemptDynamic,
           MeasuredIf(kernel.has_preempt_dynamic()));
  }
  if (ctx.preemption.mode != v1::PREEMPT_MODE_VOLUNTARY &&
      ctx.preemption.mode != v1::PREEMPT_MODE_RT) {
    in.Add(AttachInput::kPreemptRcu, ctx.preemption.preempt_rcu_source);
  }
  const v1::Thresholds& t = snapshot.thresholds();
  in.Add(AttachInput::kWatchdogThresh,
         MeasuredIf(t.has_watchdog_thresh_seconds()));
  in.Add(AttachInput::kRcuStallTimeout,
         MeasuredIf(t.has_rcu_cpu_stall_timeout_seconds()));
  if (k->walks) in.Add(AttachInput::kBatch, ctx.batch_source);
  in.Add(AttachInput::kFgraphActive,
         SourceOf(what_if.fgraph_active, MeasuredIf(ctx.active_known)));
  if (!ctx.threads_known) {
    ++k->unknown_inputs;
    return;
  }
  in.Add(AttachInput::kThreadsTotal,
         SourceOf(what_if.threads, v1::INPUT_SOURCE_MEASURED));
  if (k->walks) {
    in.Add(AttachInput::kNullThreads, ctx.null_source);
    if (ctx.page_size_used) {
      in.Add(AttachInput::kPageSize, MeasuredIf(kernel.has_page_size()));
    }
  }
  if (!ctx.c_visit_overridden && !ctx.c_visit_calibrated) {
    in.Add(AttachInput::kL3Cache, MeasuredIf(ctx.l3_known));
  }
  if (!ctx.c_visit_overridden) {
    in.Add(AttachInput::kCpuModel,
           MeasuredIf(ctx.cpu_class != v1::CPU_CLASS_UNKNOWN));
  }
}

}  // namespace

AttachCase MakeAttachCase(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                          const ModelOptions& options,
                          const AttachContext& ctx) {
  AttachCase k;
  k.kind = kind;
  const KernelFeatures& f = *ctx.features;
  k.use = DecideFgraphUse(kind, f);
  k.support = SupportOf(kind, snapshot.kernel(), f);
  k.available = k.support.availability == KindAvailability::kAvailable;
  if (!k.available) k.use.uses_fgraph = false;
  if (IsFprobeKind(kind) && !k.use.release_known) ++k.unknown_inputs;
  k.walks = k.use.uses_fgraph && !ctx.active;
  k.second_user = k.use.uses_fgraph && ctx.active && ctx.multi_user;
  k.busy = k.use.uses_fgraph && ctx.active && !ctx.multi_user;
  k.costs = SiteCostsOf(kind, ctx.ibt.on);
  for (int i = 0; i < k.use.nrows; ++i)
    k.uncertain_rows += k.use.rows[i]->uncertain;
  if (k.support.row) k.uncertain_rows += k.support.row->uncertain;

  AttachInputs& in = k.inputs;
  const OverriddenInputs& what_if = options.overridden;
  if (k.use.release_known) {
    in.Add(AttachInput::kRelease,
           SourceOf(what_if.kernel_release, f.release_source));
    if (f.release_unknown) ++k.unknown_inputs;
    // An architecture's own releases decided (entry-only fprobes), or a
    // preemption mode refused on it.
    const bool arch_row = (k.use.nrows == 2 && IsEntryOnlyFprobeKind(kind)) ||
                          ctx.preemption.refused_mode;
    if (arch_row) in.Add(AttachInput::kArch, MeasuredIf(!f.arch.empty()));
  }
  if (!k.available) return k;
  DecideSites(snapshot, options, &k);
  if (IsFprobeKind(kind)) in.Add(AttachInput::kIbt, MeasuredIf(ctx.ibt.known));
  if (k.walks || k.second_user) {
    AddWalkInputs(snapshot, ctx, what_if, &k);
    if (k.walks) {
      k.uncertain_rows += f.fgraph_walk_rcu.uncertain;
      k.uncertain_rows +=
          f.shadow_stack_4k.uncertain + f.shadow_stack_page_kmalloc.uncertain;
    }
    k.uncertain_rows += f.fgraph_multi_user.uncertain;
  } else if (k.use.uses_fgraph) {
    in.Add(AttachInput::kFgraphActive,
           SourceOf(what_if.fgraph_active, MeasuredIf(ctx.active_known)));
    k.uncertain_rows += f.fgraph_multi_user.uncertain;
  }
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

bool PatchingReschedulesFor(const AttachContext& ctx, v1::ProbeKind kind) {
  return !PatchesInOneUpdate(kind) || PatchingReschedules(ctx.features->arch);
}

void PredictFgraphAttach(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                         const ModelOptions& options, const AttachContext& ctx,
                         v1::AttachPrediction* out) {
  PredictFgraphAttach(snapshot, options, ctx,
                      MakeAttachCase(snapshot, kind, options, ctx), out);
}

namespace {

// The walk's numbers: the first user's shadow-stack walk, or a second
// user's one pass.
void SetWalk(const AttachContext& ctx, const AttachCase& k, double patch,
             v1::AttachPrediction* out, Stretches* s) {
  if (k.walks) {
    // T = c_visit · V + c_pass · P + c_alloc · N_null + c_site · sites
    //     (+ c_fixed when calibrated)
    out->set_null_threads(ctx.n_null);
    out->set_passes(ctx.walk.passes);
    out->set_visits(ctx.walk.visits);
    out->set_walk_seconds(ctx.walk_seconds);
    out->set_walk_seconds_low(ctx.walk_seconds_low);
    out->set_latency_seconds(ctx.walk_seconds + ctx.fixed_seconds + patch);
    // Shadow stacks: N_null · size, kept until each thread exits.
    out->set_shadow_stack_size(ctx.shadow_stack_size);
    out->set_shadow_stack_bytes(ctx.n_null * ctx.shadow_stack_size);
    // Before 5.10 each pass holds tasklist_lock: forks and exits wait.
    out->set_fork_wait_seconds(ctx.walk_under_rcu ? 0 : ctx.pass_seconds);
    *s = ctx.stretches;
    if (ctx.threads_at_stall) out->set_threads_at_stall(*ctx.threads_at_stall);
    if (ctx.null_threads_at_stall) {
      out->set_null_threads_at_stall(*ctx.null_threads_at_stall);
    }
  } else {
    // init_task_vars(): one pass under tasklist_lock.
    out->set_passes(1);
    out->set_visits(static_cast<double>(ctx.n_total));
    out->set_walk_seconds(ctx.pass_seconds);
    out->set_walk_seconds_low(ctx.pass_seconds);
    out->set_latency_seconds(ctx.pass_seconds + patch);
    out->set_fork_wait_seconds(ctx.pass_seconds);
    *s = SecondUserStretches(ctx.preemption, ctx.pass_seconds);
  }
  // The longest RCU read-side section is one pass: c_visit · N_total.
  out->set_longest_pass_seconds(
      OnePassSeconds(static_cast<double>(ctx.n_total), ctx.c) - ctx.c.c_pass);
  out->set_non_yielding_seconds(s->non_yielding);
}

}  // namespace

void PredictFgraphAttach(const v1::HostSnapshot& snapshot,
                         const ModelOptions& options, const AttachContext& ctx,
                         const AttachCase& k, v1::AttachPrediction* out_ptr) {
  ResetKeepingBasis(out_ptr);
  v1::AttachPrediction& out = *out_ptr;
  const v1::ProbeKind kind = k.kind;
  out.set_probe_kind(kind);
  out.set_uses_fgraph(k.use.uses_fgraph);
  out.set_fgraph_already_active(ctx.active);
  out.set_threads_total(ctx.n_total);
  out.set_batch(ctx.batch);
  out.set_unavailable(!k.available);
  out.set_busy(k.busy);
  const bool registers = k.available && !k.busy;
  out.set_patch_sites(registers ? k.sites : 0);
  // Patching and unpatching: per-site costs of the kind · sites.
  const double sites = static_cast<double>(registers ? k.sites : 0);
  const double patch = k.costs.attach * sites;
  out.set_patch_seconds(patch);
  out.set_detach_seconds(k.costs.detach * sites);
  // Before 6.14 an fprobe with an exit handler preallocates its rethook
  // nodes (possible CPUs, else online, else none known: 0).
  if (registers && k.use.rule == FgraphUseRule::kFprobeOnRethook &&
      !IsEntryOnlyFprobeKind(kind)) {
    const v1::CpuInfo& cpus = snapshot.cpus();
    const uint32_t possible =
        cpus.possible() > 0 ? cpus.possible() : cpus.online();
    out.set_rethook_bytes(RethookNodeBytes(k.sites, possible));
  }
  out.set_cpu_class(ctx.cpu_class);

  StretchInput stall;
  stall.known = ctx.preemption.mode != v1::PREEMPT_MODE_UNKNOWN;
  stall.latency_budget_seconds = options.latency_budget_seconds;
  const v1::Thresholds& thresholds = snapshot.thresholds();
  const bool walking = k.walks || k.second_user;
  if (walking && !ctx.threads_known) {
    // A walk of unknown length.
    out.set_latency_seconds(patch);
    out.set_lock_seconds(patch);
    out.set_risk(v1::RISK_UNKNOWN);
  } else {
    Stretches s;
    if (walking) {
      SetWalk(ctx, k, patch, &out, &s);
    } else {
      // Only the new user's registration and patching.
      out.set_latency_seconds(patch);
    }
    // The patching that follows, with or without a reschedule point.
    s = WithPatching(ctx.preemption, PatchingReschedulesFor(ctx, kind), s,
                     patch);
    out.set_non_yielding_seconds(s.non_yielding);
    // The walk and the patching run under ftrace_lock.
    out.set_lock_seconds(out.latency_seconds());
    stall.non_yielding_seconds = s.non_yielding;
    stall.no_qs_seconds = s.no_qs;
    stall.blocking_seconds = out.latency_seconds();
    const StallAssessment a =
        AssessStretches(stall, thresholds, out.mutable_checks());
    // Whatever the preemption model, tasks waiting for ftrace_lock sleep
    // uninterruptibly for as long as the walk holds it.
    if (walking) {
      out.set_hung_task(
          AssessHungTask(out.lock_seconds(), thresholds, out.mutable_checks()));
    }
    v1::Risk risk = a.risk;
    // An unknown release: fprobe kinds were assumed on fgraph (the worst
    // case), so any risk but none is unknown.
    if (!k.use.release_known &&
        (walking ? risk != v1::RISK_NONE
                 : IsFprobeKind(kind) && !k.use.uses_fgraph)) {
      risk = v1::RISK_UNKNOWN;
    }
    out.set_risk(risk);
    if (walking) {
      if (std::optional<CVisitFactor> f =
              CVisitFactorToStall(ctx, s, thresholds)) {
        out.set_c_visit_factor_to_stall(f->factor);
      }
    }
    if (walking && options.latency_budget_seconds && k.walks) {
      out.set_threads_at_latency_budget(ThreadsForWalkSeconds(
          *options.latency_budget_seconds - patch, ctx.batch, ctx.c));
    }
  }
  // A calibrated constant was measured on this hardware: no CPU-class loss.
  const double cpu_loss = walking && !ctx.c_visit_overridden &&
                                  !ctx.c_visit_calibrated &&
                                  ctx.cpu_class != v1::CPU_CLASS_UNKNOWN
                              ? CpuClassConfidenceLoss(ctx.cpu_class)
                              : 0.0;
  out.mutable_basis()->set_confidence(Confidence(
      k.inputs.Defaults() + k.uncertain_rows, k.unknown_inputs, cpu_loss));
}

}  // namespace tracehealth
