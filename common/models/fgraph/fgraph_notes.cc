#include "common/models/fgraph/fgraph_notes.h"

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/format.h"
#include "common/models/basis.h"

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

}  // namespace

const char* FgraphUseReason(FgraphUseRule rule) {
  for (const UseReasonRow& row : kUseReasons) {
    if (row.rule == rule) return row.reason;
  }
  return "not a probe kind";
}

// "221.9 s", "12.3 ms", "850 us": one decimal, as the summaries round.
std::string ShortDuration(double s) {
  if (s >= 1.0) return absl::StrCat(FormatFixed(s, 1), " s");
  if (s >= 1e-3) return absl::StrCat(FormatFixed(s * 1e3, 1), " ms");
  return absl::StrCat(FormatFixed(s * 1e6, 0), " us");
}

// "1.6 GB", "262 MB", "40 kB" (decimal units).
std::string ShortBytes(uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= 1e9) return absl::StrCat(FormatFixed(v / 1e9, 1), " GB");
  if (v >= 1e6) return absl::StrCat(FormatFixed(v / 1e6, 0), " MB");
  return absl::StrCat(FormatFixed(v / 1e3, 0), " kB");
}

namespace {

void AddReleaseNotes(const AttachContext& ctx, const AttachCase& k,
                     v1::Basis* basis) {
  const KernelFeatures& f = *ctx.features;
  if (!k.use.release_known) AddNote(basis, f.release_note);
  for (const AttachInputs::Entry& in : k.inputs) {
    if (in.id == AttachInput::kRelease &&
        in.source == v1::INPUT_SOURCE_OVERRIDDEN) {
      absl::StrAppend(NewNote(basis),
                      "kernel release overridden (what-if): feature rows "
                      "asked about ",
                      f.release->Version(),
                      "; the running kernel's version string and upstream "
                      "version set aside");
    }
  }
  switch (f.release_kind) {
    case ReleaseKind::kReleaseCandidate:
      AddNote(basis,
              "release candidate: what its merge window merged, no stable "
              "backports");
      break;
    case ReleaseKind::kVendorUpstream:
      absl::StrAppend(NewNote(basis), f.vendor,
                      " kernel: feature rows asked about its upstream "
                      "release ",
                      f.release->Version(),
                      " (vendor patches beyond it are not known)");
      break;
    case ReleaseKind::kVendorUnmapped:
      absl::StrAppend(NewNote(basis), f.vendor,
                      " kernel: its backports make the mainline "
                      "version meaningless; rows decided by ",
                      f.release->Version(), " as if mainline",
                      f.release_unknown ? ", confidence lowered" : "",
                      "; give its rows with --feature_table");
      break;
    case ReleaseKind::kMainline:
      break;
  }
  if (k.uncertain_rows > 0) {
    absl::StrAppend(NewNote(basis), k.uncertain_rows,
                    " feature row(s) with an inferred release next to this "
                    "kernel's: confidence lowered");
  }
}

// What the preemption model makes of the walk, in words.
void AddPreemptionNotes(const AttachContext& ctx, const AttachCase& k,
                        const v1::AttachPrediction& p, v1::Basis* basis) {
  const Preemption& pre = ctx.preemption;
  if (pre.refused_mode) {
    AddNote(basis,
            "7.0+ on this architecture offers only full and lazy: a "
            "none/voluntary mode is refused (taken as lazy)");
  }
  if (k.second_user) {
    AddNote(basis,
            "fgraph already active: a new user walks every thread once "
            "(init_task_vars) under read_lock(&tasklist_lock), preemption "
            "off; fork and exit wait with interrupts off");
    return;
  }
  switch (pre.mode) {
    case v1::PREEMPT_MODE_NONE:
      AddNote(basis,
              "PREEMPT_NONE: the whole walk runs without a "
              "reschedule point");
      break;
    case v1::PREEMPT_MODE_VOLUNTARY:
      AddNote(basis,
              "PREEMPT_VOLUNTARY: each pass's GFP_KERNEL allocations reach "
              "might_resched(), so the longest stretch is one pass");
      break;
    case v1::PREEMPT_MODE_UNKNOWN:
      AddNote(basis, "preemption unknown: the walk taken as PREEMPT_NONE");
      break;
    default:
      if (p.non_yielding_seconds() > 0) {
        AddNote(basis, ctx.walk_under_rcu
                           ? "without PREEMPT_RCU, rcu_read_lock() disables "
                             "preemption: each pass is one stretch"
                           : "before 5.10 each pass holds "
                             "read_lock(&tasklist_lock): one stretch");
      }
  }
  AddNote(basis,
          pre.preempt_rcu
              ? "PREEMPT_RCU: a tick between passes reports the quiescent "
                "state, and once the grace period is a second old the next "
                "pass's rcu_read_unlock() does, so an RCU stall needs about "
                "one pass over the timeout"
              : "no PREEMPT_RCU: a quiescent state needs a reschedule point");
  if (!ctx.walk_under_rcu) {
    AddNote(basis,
            "before 5.10 every pass holds tasklist_lock: fork and exit on "
            "other CPUs wait for it with interrupts off");
  }
}

}  // namespace

void AddAttachNotes(const v1::HostSnapshot& snapshot, const AttachContext& ctx,
                    const AttachCase& k, const v1::AttachPrediction& p,
                    v1::Basis* basis) {
  const v1::ProbeKind kind = k.kind;
  AddReleaseNotes(ctx, k, basis);
  absl::StrAppend(NewNote(basis), ProbeKindName(kind), ": ",
                  FgraphUseReason(k.use.rule));
  if (k.support.availability == KindAvailability::kConfigOff) {
    AddNote(basis,
            IsGraphTracerKind(kind)
                ? "CONFIG_FUNCTION_GRAPH_TRACER is off: this probe kind is "
                  "unavailable"
                : "CONFIG_FPROBE is off: this probe kind is unavailable");
  } else if (k.support.availability == KindAvailability::kBeforeRelease) {
    AddNote(basis, "this kernel predates the probe kind: unavailable");
  }
  if (k.busy) {
    AddNote(basis,
            "fgraph already has its one user: before 6.11 "
            "register_ftrace_graph() refuses another (-EBUSY)");
  }
  if (p.rethook_bytes() > 0) {
    absl::StrAppend(NewNote(basis), "rethook nodes: ", p.patch_sites(),
                    " site(s) x ",
                    p.rethook_bytes() / p.patch_sites() / 2 / kRethookNodeBytes,
                    " possible CPUs x 2 x ", kRethookNodeBytes,
                    " B = ", ShortBytes(p.rethook_bytes()),
                    ", preallocated at attach and held until detach");
  }
  if (ctx.threads_invalid) {
    absl::StrAppend(NewNote(basis), "threads.total ",
                    snapshot.threads().total(),
                    " exceeds PID_MAX_LIMIT (4194304): not used");
  }
  if (!k.walks && !k.second_user) return;
  if (!ctx.threads_known) {
    AddNote(basis, "threads.total unknown: walk cost cannot be predicted");
    return;
  }
  if (k.walks) {
    if (ctx.null_source == v1::INPUT_SOURCE_DEFAULT) {
      AddNote(basis,
              "N_null assumed = N_total (fgraph never active since boot)");
    } else if (!snapshot.fgraph().null_threads_basis().empty()) {
      absl::StrAppend(NewNote(basis),
                      "N_null: ", snapshot.fgraph().null_threads_basis(),
                      "; placed at the tail of the task list (worst case; "
                      "at the head ",
                      ShortDuration(p.walk_seconds_low()), ")");
    }
    absl::StrAppend(NewNote(basis), "shadow stacks: ", p.null_threads(), " x ",
                    p.shadow_stack_size(),
                    " B = ", ShortBytes(p.shadow_stack_bytes()),
                    ", kept until each thread exits, charged to no cgroup");
  }
  AddPreemptionNotes(ctx, k, p, basis);
  if (!ctx.c_visit_overridden && !ctx.c_visit_calibrated &&
      ctx.cpu_class != v1::CPU_CLASS_FITTED) {
    absl::StrAppend(NewNote(basis), "c_visit applied to ",
                    CpuClassName(ctx.cpu_class),
                    ctx.preemption.preemption_build
                        ? " (fitted on a 60-core Sapphire Rapids)"
                        : " (fitted on one unnamed host)",
                    ": confidence lowered");
  }
}

}  // namespace tracehealth
