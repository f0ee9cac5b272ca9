#include "common/models/fgraph/fgraph_kernel.h"

#include <algorithm>

#include "absl/strings/str_split.h"

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

KindSupport SupportOf(v1::ProbeKind kind, const v1::KernelInfo& kernel,
                      const KernelFeatures& features) {
  KindSupport s;
  const bool graph_off = kernel.has_config_function_graph_tracer() &&
                         !kernel.config_function_graph_tracer();
  const bool fprobe_off = kernel.has_config_fprobe() && !kernel.config_fprobe();
  if ((IsGraphTracerKind(kind) && graph_off) ||
      (IsFprobeKind(kind) && fprobe_off)) {
    s.availability = KindAvailability::kConfigOff;
    return s;
  }
  if (!features.release) return s;
  switch (kind) {
    case v1::PROBE_KIND_KPROBE_MULTI:
    case v1::PROBE_KIND_KPROBE_MULTI_RETURN:
      s.row = &features.kprobe_multi_link;
      break;
    case v1::PROBE_KIND_KPROBE_SESSION:
      s.row = &features.kprobe_session;
      break;
    case v1::PROBE_KIND_FPROBE_EVENT:
    case v1::PROBE_KIND_FPROBE_RETURN_EVENT:
      s.row = &features.fprobe_events;
      break;
    default:
      return s;
  }
  if (!s.row->present) s.availability = KindAvailability::kBeforeRelease;
  return s;
}

Preemption ResolvePreemption(const v1::KernelInfo& kernel,
                             const KernelFeatures& features) {
  Preemption p;
  p.mode = kernel.preempt_mode();
  const bool static_mode =
      p.mode == v1::PREEMPT_MODE_NONE || p.mode == v1::PREEMPT_MODE_VOLUNTARY;
  // 7dadeaa6e851 (7.0): no NONE/VOLUNTARY builds and preempt=none|voluntary
  // refused on architectures with PREEMPT_LAZY; the default there is lazy.
  if (static_mode && features.preempt_modes_restricted.present) {
    p.mode = v1::PREEMPT_MODE_LAZY;
    p.refused_mode = true;
  }
  const bool dynamic_known = kernel.has_preempt_dynamic();
  const bool dynamic = dynamic_known && kernel.preempt_dynamic();
  const bool runs_static_mode =
      p.mode == v1::PREEMPT_MODE_NONE || p.mode == v1::PREEMPT_MODE_VOLUNTARY;
  // CONFIG_PREEMPTION: every build but a static NONE/VOLUNTARY one.
  if (dynamic) {
    p.preemption_build = true;
    p.build_source = v1::INPUT_SOURCE_MEASURED;
  } else if (runs_static_mode && dynamic_known) {
    p.preemption_build = false;
    p.build_source = v1::INPUT_SOURCE_MEASURED;
  } else if (p.mode != v1::PREEMPT_MODE_UNKNOWN && !runs_static_mode) {
    p.preemption_build = true;  // the mode says so
    p.build_source = v1::INPUT_SOURCE_DERIVED;
  }
  // CONFIG_PREEMPT_RCU: read, or what the build implies (default y if
  // PREEMPTION; from 6.15 only with PREEMPT, PREEMPT_RT or PREEMPT_DYNAMIC).
  if (kernel.has_config_preempt_rcu()) {
    p.preempt_rcu = kernel.config_preempt_rcu();
    p.preempt_rcu_source = v1::INPUT_SOURCE_MEASURED;
  } else if (dynamic || p.mode == v1::PREEMPT_MODE_FULL ||
             p.mode == v1::PREEMPT_MODE_RT) {
    p.preempt_rcu = true;
    p.preempt_rcu_source = v1::INPUT_SOURCE_DERIVED;
  } else if (p.mode == v1::PREEMPT_MODE_LAZY &&
             (dynamic_known || p.refused_mode ||
              (features.release && !features.preempt_rcu_limited.present))) {
    // A static lazy build: preemptible RCU before 6.15 only. (A refused
    // none/voluntary is a PREEMPT_DYNAMIC kernel, with PREEMPT_RCU.)
    p.preempt_rcu = p.refused_mode || !features.preempt_rcu_limited.present;
    p.preempt_rcu_source = v1::INPUT_SOURCE_DERIVED;
  } else if (runs_static_mode && dynamic_known) {
    p.preempt_rcu = false;  // a static NONE/VOLUNTARY build
    p.preempt_rcu_source = v1::INPUT_SOURCE_DERIVED;
  }
  return p;
}

Stretches WalkStretches(const Preemption& p, bool walk_under_rcu,
                        double walk_seconds, double pass_seconds) {
  Stretches s;
  // A pass with preemption off: a tasklist_lock reader before 5.10, or an
  // RCU reader without PREEMPT_RCU.
  const bool pass_non_preemptible = !walk_under_rcu || !p.preempt_rcu;
  switch (p.mode) {
    case v1::PREEMPT_MODE_VOLUNTARY:
      s.non_yielding = pass_seconds;
      break;
    case v1::PREEMPT_MODE_FULL:
    case v1::PREEMPT_MODE_LAZY:
      s.non_yielding = pass_non_preemptible ? pass_seconds : 0;
      break;
    case v1::PREEMPT_MODE_RT:
      s.non_yielding = 0;
      break;
    default:  // NONE, or unknown: nothing in the walk reschedules
      s.non_yielding = walk_seconds;
      s.non_yielding_is_walk = true;
  }
  if (p.preempt_rcu) {
    s.no_qs = pass_seconds;
  } else {
    s.no_qs = std::max(s.non_yielding, pass_seconds);
    s.no_qs_is_walk = s.non_yielding_is_walk;
  }
  return s;
}

bool PatchingReschedules(absl::string_view arch) {
  return arch == "aarch64" || arch == "riscv64" || arch == "loongarch64";
}

uint64_t RethookNodeBytes(uint64_t sites, uint32_t possible_cpus) {
  return sites * possible_cpus * 2 * kRethookNodeBytes;
}

bool PatchesInOneUpdate(v1::ProbeKind kind) {
  return IsGraphTracerKind(kind) || IsFprobeKind(kind);
}

double NonYieldingPatchSeconds(const Preemption& p, bool patching_reschedules,
                               double patch_seconds) {
  if (patching_reschedules || !(patch_seconds > 0)) return 0;
  switch (p.mode) {
    case v1::PREEMPT_MODE_FULL:
    case v1::PREEMPT_MODE_LAZY:
    case v1::PREEMPT_MODE_RT:
      return 0;
    default:  // NONE, VOLUNTARY, or unknown
      return patch_seconds;
  }
}

Stretches WithPatching(const Preemption& p, bool patching_reschedules,
                       Stretches walk, double patch_seconds) {
  Stretches s = walk;
  const double patch =
      NonYieldingPatchSeconds(p, patching_reschedules, patch_seconds);
  if (!(patch > 0)) return s;
  // On NONE (and unknown) nothing between the walk and the patching
  // reschedules: a walk that is one stretch continues into it.
  const bool joined =
      p.mode != v1::PREEMPT_MODE_VOLUNTARY && s.non_yielding_is_walk;
  s.non_yielding =
      joined ? s.non_yielding + patch : std::max(s.non_yielding, patch);
  // Without PREEMPT_RCU a stretch without a reschedule point has no
  // quiescent state either (on NONE the joined one: walk and patching).
  if (!p.preempt_rcu) s.no_qs = std::max(s.no_qs, s.non_yielding);
  return s;
}

Stretches SecondUserStretches(const Preemption& p, double pass_seconds) {
  Stretches s;
  s.non_yielding = p.mode == v1::PREEMPT_MODE_RT ? 0 : pass_seconds;
  s.no_qs = pass_seconds;
  return s;
}

uint32_t ShadowStackBytesPerThread(const KernelFeatures& features,
                                   uint32_t page_size) {
  if (!features.release || features.shadow_stack_4k.present) return 4096;
  if (features.shadow_stack_page_kmalloc.present)
    return page_size > 0 ? page_size : 4096;
  return features.arch == "aarch64" ? 4096 : 2048;
}

KernelIbt KernelIbtOf(const v1::HostSnapshot& snapshot) {
  const v1::KernelInfo& kernel = snapshot.kernel();
  if (kernel.has_arch() && kernel.arch() != "x86_64") return {false, true};
  if (kernel.has_cmdline()) {
    for (absl::string_view word : absl::StrSplit(
             kernel.cmdline(), absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
      if (word == "ibt=off") return {false, true};
    }
  }
  if (!kernel.has_config_x86_kernel_ibt()) return {false, false};
  if (!kernel.config_x86_kernel_ibt()) return {false, true};
  if (!snapshot.cpus().has_ibt()) return {false, false};
  return {snapshot.cpus().ibt(), true};
}

}  // namespace tracehealth
