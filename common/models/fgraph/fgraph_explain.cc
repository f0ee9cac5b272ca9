#include "common/models/fgraph/fgraph_explain.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/format.h"
#include "common/models/basis.h"
#include "common/models/fgraph/fgraph_notes.h"
#include "common/models/kernel_features.h"
#include "common/models/risk.h"

namespace tracehealth {
namespace {

// A c_visit factor to a stall threshold below this is in the summary.
constexpr double kFactorWorthSaying = 20;

// A threshold's value as the basis shows it: the host's, or the default.
std::string ThresholdValue(bool measured, uint32_t value,
                           double default_value) {
  return measured ? absl::StrCat(value) : FormatNumber(default_value);
}

std::string YesNo(bool b) { return b ? "y" : "n"; }

// One input's value as the basis shows it.
std::string InputValue(AttachInput id, const v1::HostSnapshot& snapshot,
                       const AttachContext& ctx, const AttachTexts& texts,
                       const v1::AttachPrediction& p) {
  const v1::KernelInfo& kernel = snapshot.kernel();
  const v1::FgraphState& fg = snapshot.fgraph();
  switch (id) {
    case AttachInput::kRelease:
      return ctx.features->release_kind == ReleaseKind::kVendorUpstream
                 ? absl::StrCat(kernel.release(), " (upstream ",
                                kernel.upstream_version(), ")")
                 : kernel.release();
    case AttachInput::kArch:
      return kernel.has_arch() ? kernel.arch() : "unknown";
    case AttachInput::kSites:
    case AttachInput::kFilterFunctions:
      return absl::StrCat(p.patch_sites());
    case AttachInput::kFtraceFilter:
      if (!fg.has_ftrace_filter_functions()) return "unknown (assumed empty)";
      return fg.ftrace_filter_functions() == 0
                 ? "0 (empty: every function)"
                 : absl::StrCat(fg.ftrace_filter_functions());
    case AttachInput::kPreemptMode:
      return PreemptModeConfigName(kernel.preempt_mode());
    case AttachInput::kPreemptDynamic:
      return kernel.has_preempt_dynamic()
                 ? YesNo(kernel.preempt_dynamic())
                 : "unknown (assumed a PREEMPTION build)";
    case AttachInput::kPreemptRcu:
      return ctx.preemption.preempt_rcu_source == v1::INPUT_SOURCE_DEFAULT
                 ? "unknown (assumed n)"
                 : YesNo(ctx.preemption.preempt_rcu);
    case AttachInput::kWatchdogThresh:
      return texts.watchdog_thresh;
    case AttachInput::kRcuStallTimeout:
      return texts.rcu_stall_timeout;
    case AttachInput::kBatch:
      return texts.batch;
    case AttachInput::kFgraphActive:
      return p.fgraph_already_active() ? "true"
             : ctx.active_known        ? "false"
                                       : "unknown (assumed false)";
    case AttachInput::kThreadsTotal:
      return texts.threads_total;
    case AttachInput::kNullThreads:
      return texts.null_threads;
    case AttachInput::kPageSize:
      return kernel.has_page_size() ? absl::StrCat(kernel.page_size())
                                    : "4096 (assumed)";
    case AttachInput::kIbt:
      if (!ctx.ibt.known) return "unknown (assumed off)";
      return ctx.ibt.on ? "on (CONFIG_X86_KERNEL_IBT=y, the CPU's ibt flag)"
                        : "off";
    case AttachInput::kL3Cache:
      if (!ctx.l3_known) return "unknown (one price for every pass)";
      return absl::StrCat(snapshot.cpus().l3_cache_bytes(), " (",
                          FormatFixed(ctx.c.levels[0].from_tasks, 0),
                          " tasks at 128 B)");
    case AttachInput::kCpuModel:
      return snapshot.cpus().has_model_name()
                 ? absl::StrCat(snapshot.cpus().model_name(), " (",
                                CpuClassName(ctx.cpu_class), ")")
                 : "unknown";
  }
  return "";
}

void AddInputs(const v1::HostSnapshot& snapshot, const AttachContext& ctx,
               const AttachTexts& texts, const AttachCase& k,
               const v1::AttachPrediction& p, v1::Basis* basis) {
  static constexpr const char* kNames[] = {
      "kernel.release",
      "kernel.arch",
      "sites",
      "fgraph.ftrace_filter_functions",
      "fgraph.available_filter_functions",
      "kernel.preempt_mode",
      "kernel.preempt_dynamic",
      "kernel.config_preempt_rcu",
      "thresholds.watchdog_thresh",
      "thresholds.rcu_cpu_stall_timeout",
      "batch",
      "fgraph.active",
      "threads.total",
      "fgraph.null_threads_bound",
      "kernel.page_size",
      "cpus.model_name",
      "kernel.ibt",
      "cpus.l3_cache_bytes",
  };
  for (const AttachInputs::Entry& e : k.inputs) {
    AddInput(basis, kNames[static_cast<int>(e.id)],
             InputValue(e.id, snapshot, ctx, texts, p), e.source);
  }
}

// c_visit's origin: the what-if, a calibration (its source), or the seed
// default fitted for the configuration it was chosen for.
std::string CVisitOrigin(const AttachContext& ctx) {
  if (ctx.c_visit_overridden) return "override";
  if (ctx.c_visit_calibrated) return ctx.calibration_source;
  return ctx.preemption.preemption_build
             ? "seed default: CONFIG_PREEMPTION builds: minimax fit over the "
               "batch-size thread's six PREEMPT_LAZY rows (81-98 ns each, "
               "+-9.2%), 60-core Sapphire Rapids"
             : "seed default: static PREEMPT_NONE/VOLUNTARY builds: fit to "
               "the thread's 6.16 PREEMPT_NONE run (240,000 threads, "
               "51.3-54.6 s, +-3.1%; host not named)";
}

v1::Anchor CVisitAnchor(const AttachContext& ctx) {
  if (ctx.c_visit_overridden) return v1::ANCHOR_OVERRIDE;
  return ctx.c_visit_calibrated ? v1::ANCHOR_CALIBRATED : v1::ANCHOR_FIT;
}

// Per-site origins by probe kind (fgraph_constants.h).
const char* SiteOrigin(v1::ProbeKind kind, bool detach, bool ibt) {
  if (IsFprobeKind(kind) && ibt) {
    return detach ? "56,140 functions detached in 13.245 s (kprobe_multi "
                    "bench, a kernel enforcing IBT)"
                  : "56,140 functions attached in 89.174 s (kprobe_multi "
                    "bench, a kernel enforcing IBT)";
  }
  if (IsFprobeKind(kind)) {
    return detach ? "48,712 functions detached in 0.373 s (kprobe_multi "
                    "bench, no IBT; 0.24 ms per site with IBT)"
                  : "48,712 functions attached in 1.069 s (kprobe_multi "
                    "bench, no IBT; 1.6 ms per site with IBT)";
  }
  if (kind == v1::PROBE_KIND_KRETPROBE) {
    return detach ? "model assumption: as attaching"
                  : "184 kprobes per second (cilium/pwru PR #470)";
  }
  if (kind == v1::PROBE_KIND_FENTRY_FEXIT) {
    return detach ? "over 5 min for 2,800 fentry probes (bpftrace PR #3053): "
                    "a lower bound"
                  : "2,800 fentry probes in 17 s (bpftrace PR #3053, 5.19)";
  }
  return detach ? "model assumption: as patching; RCU-tasks waits not priced"
                : "model assumption: batched text_poke per call site (no "
                  "published figure for function_graph)";
}

// Constants (the walk's only when there is a walk) and feature rows.
void AddConstantsAndRows(const AttachContext& ctx, const AttachCase& k,
                         v1::Basis* basis) {
  const WalkConstants& c = ctx.c;
  if (k.walks || k.second_user) {
    AddConstant(basis, "c_visit", c.c_visit, "s", CVisitOrigin(ctx),
                CVisitAnchor(ctx));
    AddConstant(basis, "c_pass", c.c_pass, "s",
                "model assumption: RCU lock/unlock and loop set-up per pass",
                v1::ANCHOR_ASSUMPTION);
    if (ctx.l3_known && !ctx.c_visit_calibrated && !ctx.c_visit_overridden) {
      AddConstant(basis, "c_miss", kCMissExtra, "s",
                  "model assumption: a memory miss in place of an L3 hit, "
                  "per visit of a pass longer than the L3 holds (128 B a "
                  "task)",
                  v1::ANCHOR_ASSUMPTION);
    }
  }
  if (k.walks) {
    AddConstant(basis, "c_alloc", c.c_alloc, "s",
                "model assumption: slab fast path per shadow stack",
                v1::ANCHOR_ASSUMPTION);
    if (ctx.c_visit_calibrated) {
      AddConstant(basis, "c_fixed", ctx.fixed_seconds, "s",
                  ctx.calibration_source, v1::ANCHOR_CALIBRATED);
    }
  }
  if (k.available && !k.busy) {
    AddConstant(basis, "c_site", k.costs.attach, "s",
                SiteOrigin(k.kind, false, ctx.ibt.on), k.costs.attach_anchor);
    AddConstant(basis, "c_site_detach", k.costs.detach, "s",
                SiteOrigin(k.kind, true, ctx.ibt.on), k.costs.detach_anchor);
  }
  const KernelFeatures& f = *ctx.features;
  for (int i = 0; i < k.use.nrows; ++i)
    AddFeatureRow(basis, k.use.rows[i]->row);
  if (k.support.row) AddFeatureRow(basis, k.support.row->row);
  if (!f.release) return;
  if (k.walks) {
    if (ctx.batch_source == v1::INPUT_SOURCE_DERIVED)
      AddFeatureRow(basis, f.retstack_batch_1024.row);
    AddFeatureRow(basis, f.fgraph_walk_rcu.row);
    AddFeatureRow(basis, f.shadow_stack_page_kmalloc.row);
    AddFeatureRow(basis, f.shadow_stack_4k.row);
  }
  if (k.use.uses_fgraph && ctx.active) {
    AddFeatureRow(basis, f.fgraph_multi_user.row);
  }
  if ((k.walks || k.second_user) && ctx.preemption.refused_mode) {
    AddFeatureRow(basis, f.preempt_modes_restricted.row);
  }
}

// The worst applicable stall check of `p` (soft lockup, RCU stall), or
// nullptr.
const v1::ThresholdCheck* WorstCheck(const v1::AttachPrediction& p) {
  const v1::ThresholdCheck* worst = nullptr;
  for (const auto& check : p.checks()) {
    if (check.applies() && check.kind() != v1::ThresholdCheck::KIND_LATENCY &&
        check.kind() != v1::ThresholdCheck::KIND_HUNG_TASK &&
        (worst == nullptr || check.margin() > worst->margin())) {
      worst = &check;
    }
  }
  return worst;
}

// Seconds the patching runs without a reschedule point (0 when it has
// them or the mode preempts it).
double PatchStretch(const AttachContext& ctx, const AttachCase& k,
                    const v1::AttachPrediction& p) {
  return NonYieldingPatchSeconds(
      ctx.preemption, PatchingReschedulesFor(ctx, k.kind), p.patch_seconds());
}

// "; patching 50000 sites runs 50.0 ms without a reschedule point (x86's
// ftrace_replace_code() has none)", when it does.
void AppendPatchStretch(const AttachContext& ctx, const AttachCase& k,
                        const v1::AttachPrediction& p, std::string* summary) {
  const double patch = PatchStretch(ctx, k, p);
  if (!(patch > 0)) return;
  absl::StrAppend(summary, "; patching ", p.patch_sites(), " site(s) runs ",
                  ShortDuration(patch),
                  " without a reschedule point (ftrace_replace_code() on ",
                  ctx.features->arch.empty() ? "an unknown architecture"
                                             : ctx.features->arch,
                  " has none)");
}

// "predicts a soft lockup (PREEMPT_NONE, 11.09x the 20 s threshold); at
// 400000 threads it stays below it under 18062 NULL-stack threads", or what
// else the risk says.
void AppendRiskPhrase(const AttachContext& ctx, const AttachCase& k,
                      const v1::AttachPrediction& p, std::string* summary) {
  const v1::PreemptMode mode = ctx.preemption.mode;
  switch (p.risk()) {
    case v1::RISK_STALL:
    case v1::RISK_WARNING: {
      const v1::ThresholdCheck* worst = WorstCheck(p);
      absl::StrAppend(
          summary, p.risk() == v1::RISK_STALL ? "predicts a " : "close to a ",
          worst ? CheckKindName(worst->kind()) : "stall", " (",
          PreemptModeConfigName(mode), ", ",
          FormatFixed(worst ? worst->margin() : 0.0, 2), "x the ",
          FormatFixed(worst ? worst->threshold() : 0.0, 0), " s threshold)");
      // Named where it weighs: a tenth of the longest stretch or more.
      if (PatchStretch(ctx, k, p) >= 0.1 * p.non_yielding_seconds()) {
        AppendPatchStretch(ctx, k, p, summary);
      }
      if (p.has_null_threads_at_stall()) {
        absl::StrAppend(summary, "; it stays below it under ",
                        FormatFixed(p.null_threads_at_stall(), 0),
                        " NULL-stack threads at this thread count");
        if (p.has_threads_at_stall()) {
          absl::StrAppend(summary, ", or ",
                          FormatFixed(p.threads_at_stall(), 0),
                          " threads all without one");
        }
      } else if (p.has_threads_at_stall()) {
        absl::StrAppend(summary, "; it stays below it under ",
                        FormatFixed(p.threads_at_stall(), 0), " threads");
      }
      break;
    }
    case v1::RISK_UNKNOWN:
      absl::StrAppend(
          summary,
          k.use.release_known
              ? "a non-preemptible kernel would stall; preemption mode unknown"
              : "kernel release unknown, worst case shown");
      break;
    default:
      if (p.non_yielding_seconds() > 0 && mode == v1::PREEMPT_MODE_VOLUNTARY) {
        if (k.walks || k.second_user) {
          absl::StrAppend(summary,
                          "no stall: PREEMPT_VOLUNTARY reschedules "
                          "every pass (",
                          ShortDuration(ctx.pass_seconds), ")");
        } else {
          absl::StrAppend(summary, "no stall");
        }
        if (PatchStretch(ctx, k, p) > ctx.pass_seconds ||
            !(k.walks || k.second_user)) {
          AppendPatchStretch(ctx, k, p, summary);
        }
      } else if (p.non_yielding_seconds() > 0 &&
                 mode != v1::PREEMPT_MODE_NONE) {
        absl::StrAppend(summary, "no stall: ", PreemptModeConfigName(mode),
                        " preempts between passes (",
                        ShortDuration(p.non_yielding_seconds()),
                        " each with preemption off)");
      } else if (p.non_yielding_seconds() <= 0) {
        absl::StrAppend(summary, "latency only (", PreemptModeConfigName(mode),
                        ")");
      } else {
        absl::StrAppend(summary, "no stall expected");
      }
  }
}

// "; crosses the soft-lockup threshold if c_visit is 3.5x the fitted value
// (an emulated CPU)": how far the constant would have to be off.
void AppendFactorPhrase(const v1::HostSnapshot& snapshot,
                        const AttachContext& ctx, const AttachCase& k,
                        std::string* summary) {
  const Stretches s =
      k.walks ? ctx.stretches
              : SecondUserStretches(ctx.preemption, ctx.pass_seconds);
  const std::optional<CVisitFactor> f =
      CVisitFactorToStall(ctx, s, snapshot.thresholds());
  // Said when a CPU the constant was not fitted on could be that far off
  // (a QEMU TCG guest measured 4.6-7.5x); the number is always in
  // c_visit_factor_to_stall.
  if (!f || f->factor >= kFactorWorthSaying) return;
  const char* value = ctx.c_visit_overridden   ? "the given"
                      : ctx.c_visit_calibrated ? "the calibrated"
                                               : "the fitted";
  if (f->factor >= 1) {
    absl::StrAppend(summary, "; crosses the ", CheckKindAdjective(f->check),
                    " threshold if c_visit is ", FormatFixed(f->factor, 1),
                    "x ", value, " value");
  } else {
    absl::StrAppend(summary, "; stays below the ", CheckKindAdjective(f->check),
                    " threshold only if c_visit is under ",
                    FormatFixed(f->factor, 2), "x ", value, " value");
  }
  if (!ctx.c_visit_overridden && !ctx.c_visit_calibrated &&
      ctx.cpu_class != v1::CPU_CLASS_FITTED) {
    absl::StrAppend(summary, " (", CpuClassName(ctx.cpu_class),
                    snapshot.cpus().has_model_name()
                        ? absl::StrCat(": ", snapshot.cpus().model_name())
                        : std::string(),
                    ")");
  }
}

// "; tasks waiting for ftrace_lock are reported hung (1.85x the 120 s
// hung_task_timeout_secs), and hung_task_panic panics the host": only when
// the hold reaches the timeout.
void AppendHungTaskPhrase(const v1::AttachPrediction& p, std::string* summary) {
  if (p.hung_task() != v1::HUNG_TASK_RISK_REPORTED &&
      p.hung_task() != v1::HUNG_TASK_RISK_PANIC) {
    return;
  }
  for (const v1::ThresholdCheck& c : p.checks()) {
    if (c.kind() != v1::ThresholdCheck::KIND_HUNG_TASK) continue;
    absl::StrAppend(summary,
                    "; tasks waiting for ftrace_lock are reported hung (",
                    FormatFixed(c.margin(), 2), "x the ",
                    FormatFixed(c.threshold(), 0), " s hung_task_timeout_secs)",
                    p.hung_task() == v1::HUNG_TASK_RISK_PANIC
                        ? ", and hung_task_panic panics the host"
                        : "");
    return;
  }
}

void WriteSummary(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
                  const AttachContext& ctx, const AttachCase& k,
                  const v1::AttachPrediction& p, std::string* summary) {
  absl::StrAppend(summary, ProbeKindName(kind), ": ");
  if (!k.walks && !k.second_user) {
    if (!k.available) {
      absl::StrAppend(summary, "unavailable on this kernel.");
      return;
    }
    if (k.busy) {
      absl::StrAppend(summary,
                      "fgraph already has its one user on this kernel: the "
                      "attach fails with EBUSY.");
      return;
    }
    if (p.uses_fgraph()) {
      absl::StrAppend(summary, "fgraph already active, no shadow-stack walk");
    } else {
      absl::StrAppend(summary, "does not use fgraph here (",
                      FgraphUseReason(k.use.rule), ")");
    }
    absl::StrAppend(summary, "; about ", ShortDuration(p.patch_seconds()),
                    " to patch ", p.patch_sites(), " site(s), ",
                    ShortDuration(p.detach_seconds()),
                    " to detach; no stall risk.");
    return;
  }
  if (!ctx.threads_known) {
    absl::StrAppend(
        summary,
        "walks every thread's shadow stack, but the thread count is unknown.");
    return;
  }
  if (k.walks) {
    absl::StrAppend(summary, "first attach walks ", p.threads_total(),
                    " threads (", p.null_threads(),
                    " without a shadow stack) in ", p.passes(), " passes of ",
                    p.batch(), ": about ", ShortDuration(p.latency_seconds()),
                    " blocked");
  } else {
    absl::StrAppend(summary, "fgraph already active: a new user walks ",
                    p.threads_total(), " threads once, about ",
                    ShortDuration(p.latency_seconds()),
                    " blocked, fork and exit waiting for tasklist_lock");
  }
  if (p.lock_seconds() >= kNoticeableSeconds) {
    absl::StrAppend(summary,
                    ", holding ftrace_lock (other attaches, tracer "
                    "changes and module loads wait)");
  }
  absl::StrAppend(summary, "; ");
  AppendRiskPhrase(ctx, k, p, summary);
  if (p.risk() != v1::RISK_UNKNOWN)
    AppendFactorPhrase(snapshot, ctx, k, summary);
  AppendHungTaskPhrase(p, summary);
  absl::StrAppend(summary, ".");
}

}  // namespace

AttachTexts MakeAttachTexts(const v1::HostSnapshot& snapshot,
                            const AttachContext& ctx) {
  const v1::Thresholds& t = snapshot.thresholds();
  AttachTexts texts;
  texts.watchdog_thresh = ThresholdValue(t.has_watchdog_thresh_seconds(),
                                         t.watchdog_thresh_seconds(),
                                         kDefaultWatchdogThreshSeconds);
  texts.rcu_stall_timeout = ThresholdValue(
      t.has_rcu_cpu_stall_timeout_seconds(), t.rcu_cpu_stall_timeout_seconds(),
      kDefaultRcuStallTimeoutSeconds);
  texts.batch = absl::StrCat(ctx.batch);
  if (ctx.threads_known) {
    texts.threads_total = absl::StrCat(ctx.n_total);
    texts.null_threads = ctx.null_source == v1::INPUT_SOURCE_DEFAULT
                             ? absl::StrCat(ctx.n_null, " (= threads.total)")
                             : absl::StrCat(ctx.n_null);
  }
  return texts;
}

void ExplainFgraphAttach(const v1::HostSnapshot& snapshot,
                         const ModelOptions& options, const AttachContext& ctx,
                         const AttachTexts& texts, v1::AttachPrediction* p) {
  ExplainFgraphAttach(snapshot, ctx, texts,
                      MakeAttachCase(snapshot, p->probe_kind(), options, ctx),
                      p);
}

void ExplainFgraphAttach(const v1::HostSnapshot& snapshot,
                         const AttachContext& ctx, const AttachTexts& texts,
                         const AttachCase& k, v1::AttachPrediction* p) {
  ClearExplanation(p);
  const v1::ProbeKind kind = k.kind;
  v1::Basis* basis = p->mutable_basis();
  AddInputs(snapshot, ctx, texts, k, *p, basis);
  AddConstantsAndRows(ctx, k, basis);
  AddAttachNotes(snapshot, ctx, k, *p, basis);
  WriteSummary(snapshot, kind, ctx, k, *p, p->mutable_summary());
}

void ExplainFgraphAttach(const v1::HostSnapshot& snapshot,
                         const ModelOptions& options, v1::AttachPrediction* p) {
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), options);
  const AttachContext ctx = MakeAttachContext(snapshot, options, features);
  ExplainFgraphAttach(snapshot, options, ctx, MakeAttachTexts(snapshot, ctx),
                      p);
}

}  // namespace tracehealth
