#include "common/models/fgraph/fgraph_explain.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/format.h"
#include "common/models/basis.h"
#include "common/models/kernel_features.h"
#include "common/models/risk.h"

namespace tracehealth {
namespace {

struct UseReasonRow {
  FgraphUseRule rule;
  const char* reason;
};
constexpr UseReasonRow kUseReasons[] = {
    {FgraphUseRule::kGraphTracer, "registers an fgraph user on every kernel"},
    {FgraphUseRule::kKretprobe, "kretprobes use rethook, never fgraph"},
    {FgraphUseRule::kTrampoline, "BPF trampolines never use fgraph"},
    {FgraphUseRule::kNotAProbe, "not a probe kind"},
    {FgraphUseRule::kReleaseUnknown,
     "kernel release unknown: assumed fprobe on fgraph (worst case)"},
    {FgraphUseRule::kFprobeOnRethook,
     "fprobe is not built on fgraph before 6.14 (rethook)"},
    {FgraphUseRule::kEntryOnlyOffFgraph,
     "entry-only fprobes no longer register fgraph"},
    {FgraphUseRule::kEveryFprobe,
     "every fprobe user registers fgraph on this kernel"},
    {FgraphUseRule::kExitHandler,
     "fprobes with an exit handler register fgraph"},
};

const char* UseReason(FgraphUseRule rule) {
  for (const UseReasonRow& row : kUseReasons) {
    if (row.rule == rule) return row.reason;
  }
  return "not a probe kind";
}

// "221.9 s", "12.3 ms", "850 us": one decimal, as the summaries round.
std::string Duration(double s) {
  if (s >= 1.0) return absl::StrCat(FormatFixed(s, 1), " s");
  if (s >= 1e-3) return absl::StrCat(FormatFixed(s * 1e3, 1), " ms");
  return absl::StrCat(FormatFixed(s * 1e6, 0), " us");
}

// A threshold's value as the basis shows it: the host's, or the default.
std::string ThresholdValue(bool measured, uint32_t value,
                           double default_value) {
  return measured ? absl::StrCat(value) : FormatNumber(default_value);
}

void AddInputs(const v1::HostSnapshot& snapshot, const AttachContext& ctx,
               const AttachTexts& texts, const AttachCase& k,
               const v1::AttachPrediction& p, v1::Basis* basis) {
  for (const AttachInputs::Entry& e : k.inputs) {
    switch (e.id) {
      case AttachInput::kRelease:
        AddInput(basis, "kernel.release", snapshot.kernel().release(),
                 e.source);
        break;
      case AttachInput::kSites:
        AddInput(basis, "sites", absl::StrCat(p.patch_sites()), e.source);
        break;
      case AttachInput::kFilterFunctions:
        AddInput(basis, "fgraph.available_filter_functions",
                 absl::StrCat(p.patch_sites()), e.source);
        break;
      case AttachInput::kPreemptMode:
        AddInput(basis, "kernel.preempt_mode",
                 PreemptModeConfigName(ctx.preempt), e.source);
        break;
      case AttachInput::kWatchdogThresh:
        AddInput(basis, "thresholds.watchdog_thresh", texts.watchdog_thresh,
                 e.source);
        break;
      case AttachInput::kRcuStallTimeout:
        AddInput(basis, "thresholds.rcu_cpu_stall_timeout",
                 texts.rcu_stall_timeout, e.source);
        break;
      case AttachInput::kBatch:
        AddInput(basis, "batch", texts.batch, e.source);
        break;
      case AttachInput::kFgraphActive:
        AddInput(basis, "fgraph.active",
                 p.fgraph_already_active() ? "true"
                 : ctx.active_known        ? "false"
                                           : "unknown (assumed false)",
                 e.source);
        break;
      case AttachInput::kThreadsTotal:
        AddInput(basis, "threads.total", texts.threads_total, e.source);
        break;
      case AttachInput::kNullThreads:
        AddInput(basis, "fgraph.null_threads_bound", texts.null_threads,
                 e.source);
        break;
    }
  }
}

// Constants (the walk's only when there is a walk) and feature rows.
void AddConstantsAndRows(const AttachContext& ctx, const AttachCase& k,
                         v1::Basis* basis) {
  const FgraphConstants& c = ctx.c;
  if (k.walks) {
    AddConstant(basis, "c_visit", c.c_visit, "s",
                ctx.c_visit_overridden
                    ? "override"
                    : "seed 000 minimax fit over six rows (81-98 ns each), "
                      "60-core Sapphire Rapids");
    AddConstant(basis, "c_pass", c.c_pass, "s",
                "model assumption: RCU lock/unlock and loop set-up per pass");
    AddConstant(basis, "c_alloc", c.c_alloc, "s",
                "model assumption: kmem_cache_alloc fast path per 4 KiB stack");
  }
  AddConstant(basis, "c_site", c.c_site, "s",
              "model assumption: batched text_poke per patched call site");
  for (int i = 0; i < k.use.nrows; ++i)
    AddFeatureRow(basis, k.use.rows[i]->row);
  if (k.walks && ctx.batch_source == v1::INPUT_SOURCE_DERIVED) {
    AddFeatureRow(basis, ctx.features->retstack_batch_1024.row);
  }
}

void AddNotes(const v1::HostSnapshot& snapshot, v1::ProbeKind kind,
              const AttachContext& ctx, const AttachCase& k, v1::Basis* basis) {
  if (!k.use.release_known) AddNote(basis, ctx.features->release_note);
  absl::StrAppend(NewNote(basis), ProbeKindName(kind), ": ",
                  UseReason(k.use.rule));
  if (!k.available) {
    AddNote(basis,
            IsGraphTracerKind(kind)
                ? "CONFIG_FUNCTION_GRAPH_TRACER is off: this probe kind is "
                  "unavailable"
                : "CONFIG_FPROBE is off: this probe kind is unavailable");
  }
  if (!k.walks) {
    if (k.use.uses_fgraph) {
      AddNote(
          basis,
          "fgraph already active: every thread has a shadow stack, no walk");
    }
    return;
  }
  if (!ctx.threads_known) {
    AddNote(basis, "threads.total unknown: walk cost cannot be predicted");
  } else if (ctx.null_source == v1::INPUT_SOURCE_DEFAULT) {
    AddNote(basis, "N_null assumed = N_total (fgraph never active since boot)");
  } else if (!snapshot.fgraph().null_threads_basis().empty()) {
    absl::StrAppend(NewNote(basis),
                    "N_null: ", snapshot.fgraph().null_threads_basis());
  }
}

// "predicts a soft lockup (PREEMPT_NONE, 11.09x the 20 s threshold); stays
// below it under 120082 NULL-stack threads", or what else the risk says.
void AppendRiskPhrase(const AttachContext& ctx, const AttachCase& k,
                      const v1::AttachPrediction& p, std::string* summary) {
  switch (p.risk()) {
    case v1::RISK_STALL:
    case v1::RISK_WARNING: {
      const v1::ThresholdCheck* worst = nullptr;
      for (const auto& check : p.checks()) {
        if (check.applies() &&
            check.kind() != v1::ThresholdCheck::KIND_LATENCY &&
            (worst == nullptr || check.margin() > worst->margin())) {
          worst = &check;
        }
      }
      absl::StrAppend(
          summary, p.risk() == v1::RISK_STALL ? "predicts a " : "close to a ",
          worst ? CheckKindName(worst->kind()) : "stall", " (",
          PreemptModeConfigName(ctx.preempt), ", ",
          FormatFixed(worst ? worst->margin() : 0.0, 2), "x the ",
          FormatFixed(worst ? worst->threshold() : 0.0, 0), " s threshold)");
      if (p.has_threads_at_stall()) {
        absl::StrAppend(summary, "; stays below it under ",
                        FormatFixed(p.threads_at_stall(), 0),
                        " NULL-stack threads");
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
      if (PreemptibilityOf(ctx.preempt) == Preemptibility::kPreemptible) {
        absl::StrAppend(summary, "latency only (",
                        PreemptModeConfigName(ctx.preempt), ")");
      } else {
        absl::StrAppend(summary, "no stall expected");
      }
  }
}

void WriteSummary(v1::ProbeKind kind, const AttachContext& ctx,
                  const AttachCase& k, const v1::AttachPrediction& p,
                  std::string* summary) {
  absl::StrAppend(summary, ProbeKindName(kind), ": ");
  if (!k.walks) {
    if (!k.available) {
      absl::StrAppend(summary, "unavailable on this kernel");
    } else if (p.uses_fgraph()) {
      absl::StrAppend(summary, "fgraph already active, no shadow-stack walk");
    } else {
      absl::StrAppend(summary, "does not use fgraph here (",
                      UseReason(k.use.rule), ")");
    }
    absl::StrAppend(summary, "; about ", Duration(p.patch_seconds()),
                    " to patch ", p.patch_sites(), " site(s); no stall risk.");
    return;
  }
  if (!ctx.threads_known) {
    absl::StrAppend(
        summary,
        "walks every thread's shadow stack, but the thread count is unknown.");
    return;
  }
  absl::StrAppend(summary, "first attach walks ", p.threads_total(),
                  " threads (", p.null_threads(),
                  " without a shadow stack) in ", p.passes(), " passes of ",
                  p.batch(), ": about ", Duration(p.latency_seconds()),
                  " blocked; ");
  AppendRiskPhrase(ctx, k, p, summary);
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
  AddNotes(snapshot, kind, ctx, k, basis);
  WriteSummary(kind, ctx, k, *p, p->mutable_summary());
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
