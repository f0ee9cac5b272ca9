#include "tools/tracehealthctl/model_request.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/enum_names.h"
#include "common/kernel/release.h"
#include "common/models/fgraph/fgraph_walk.h"
#include "common/models/stackdepot/stack_depot.h"

namespace tracehealth {

absl::StatusOr<std::optional<v1::PreemptMode>> PreemptFlag(
    const ModelFlags& f) {
  const std::string preempt = absl::AsciiStrToLower(f.preempt);
  if (preempt.empty()) return std::optional<v1::PreemptMode>();
  std::optional<v1::PreemptMode> mode = PreemptModeFromName(preempt);
  if (!mode.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--preempt: expected none|voluntary|full|lazy|rt, got '",
                     preempt, "'"));
  }
  return mode;
}

absl::StatusOr<std::optional<v1::ProbeKind>> ProbeFlag(const ModelFlags& f) {
  const std::string probe = absl::AsciiStrToLower(f.probe);
  if (probe.empty()) return std::optional<v1::ProbeKind>();
  if (std::optional<v1::ProbeKind> k = ProbeKindFromFlag(probe)) return k;
  // The enum's own name without its prefix ("fentry_fexit") too.
  v1::ProbeKind kind;
  if (v1::ProbeKind_Parse("PROBE_KIND_" + absl::AsciiStrToUpper(probe),
                          &kind) &&
      kind != v1::PROBE_KIND_UNSPECIFIED) {
    return std::optional<v1::ProbeKind>(kind);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--probe: unknown kind '", probe, "' (",
                   absl::StrJoin(ProbeKindFlags(), "|"), ")"));
}

namespace {

// A whole-number flag the user gave (-1: not given): `set` puts it in the
// request, and basis input `input` is marked given.
template <typename Set>
void Given(ModelRequest* r, int64_t value, const char* input, Set set) {
  if (value < 0) return;
  set(value);
  r->given.insert(input);
}

// A true|false flag the user gave (nullopt: not given): `set` puts it in
// the request and basis input `input` (if any) is marked given.
template <typename Set>
void GivenBool(ModelRequest* r, std::optional<bool> value, const char* input,
               Set set) {
  if (!value.has_value()) return;
  set(*value);
  if (*input) r->given.insert(input);
}

absl::Status NonNegative(const std::string& name, int64_t value) {
  if (value < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckModelFlagRanges(const ModelFlags& f) {
  const std::pair<const char*, int64_t> numeric[] = {
      {"watchdog_thresh", f.watchdog_thresh},
      {"rcu_stall_timeout", f.rcu_stall_timeout},
      {"threads", f.threads},
      {"null_threads", f.null_threads},
      {"batch", f.batch},
      {"sites", f.sites},
      {"filter_functions", f.filter_functions},
      {"cpus", f.cpus},
      {"possible_cpus", f.possible_cpus},
      {"ftrace_filter", f.ftrace_filter},
      {"unpurged_areas", f.unpurged_areas},
      {"shadow_page_areas", f.shadow_page_areas},
      {"page_size", f.page_size},
      {"pools", f.pools},
      {"max_pools", f.max_pools},
      {"frames", f.frames},
      {"persistent_count", f.persistent_count},
      {"persistent_bytes", f.persistent_bytes},
  };
  for (const auto& [name, value] : numeric) {
    absl::Status st = NonNegative(name, value);
    if (!st.ok()) return st;
  }
  // No kernel has more threads than PID_MAX_LIMIT.
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"threads", f.threads},
        {"null_threads", f.null_threads}}) {
    if (value > static_cast<int64_t>(kPidMaxLimit)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " must be at most ", kPidMaxLimit, " (PID_MAX_LIMIT)"));
    }
  }
  const std::pair<const char*, double> real[] = {
      {"c_visit_ns", f.c_visit_ns},
      {"latency_budget", f.latency_budget},
  };
  for (const auto& [name, value] : real) {
    if ((value < 0 && value != -1) || std::isnan(value) || std::isinf(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " must be >= 0"));
    }
  }
  return absl::OkStatus();
}

namespace {

// The flags every model reads: release, preemption, thresholds.
absl::Status AddCommonInputs(const ModelFlags& f, ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  const std::string kernel = f.kernel;
  if (!kernel.empty()) {
    absl::StatusOr<KernelRelease> release = ParseKernelRelease(kernel);
    if (!release.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kernel: ", release.status().message()));
    }
    s.mutable_kernel()->set_release(kernel);
    r->given.insert("kernel.release");
  }
  absl::StatusOr<std::optional<v1::PreemptMode>> mode = PreemptFlag(f);
  if (!mode.ok()) return mode.status();
  if (mode->has_value()) {
    s.mutable_kernel()->set_preempt_mode(**mode);
    s.mutable_kernel()->set_preempt_source("--preempt");
    r->given.insert("kernel.preempt_mode");
  }
  const std::string arch = f.arch;
  if (!arch.empty()) {
    s.mutable_kernel()->set_arch(arch);
    r->given.insert("kernel.arch");
  }
  Given(r, f.watchdog_thresh, "thresholds.watchdog_thresh", [&](int64_t v) {
    s.mutable_thresholds()->set_watchdog_thresh_seconds(
        static_cast<uint32_t>(v));
  });
  Given(r, f.rcu_stall_timeout, "thresholds.rcu_cpu_stall_timeout",
        [&](int64_t v) {
          s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(
              static_cast<uint32_t>(v));
        });
  return absl::OkStatus();
}

absl::Status AddFgraphInputs(const ModelFlags& f, ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  Given(r, f.threads, "threads.total", [&](int64_t v) {
    s.mutable_threads()->set_total(static_cast<uint64_t>(v));
  });
  Given(r, f.null_threads, "fgraph.null_threads_bound", [&](int64_t v) {
    s.mutable_fgraph()->set_null_threads_bound(static_cast<uint64_t>(v));
    s.mutable_fgraph()->set_null_threads_basis("given by --null_threads");
  });
  v1::KernelInfo* kernel = s.mutable_kernel();
  GivenBool(r, f.fgraph_active, "fgraph.active",
            [&](bool b) { s.mutable_fgraph()->set_active(b); });
  GivenBool(r, f.preempt_dynamic, "kernel.preempt_dynamic",
            [&](bool b) { kernel->set_preempt_dynamic(b); });
  GivenBool(r, f.preempt_rcu, "kernel.config_preempt_rcu",
            [&](bool b) { kernel->set_config_preempt_rcu(b); });
  GivenBool(r, f.hypervisor, "",
            [&](bool b) { s.mutable_cpus()->set_hypervisor(b); });
  const std::string cpu_model = f.cpu_model;
  if (!cpu_model.empty()) {
    s.mutable_cpus()->set_model_name(cpu_model);
    r->given.insert("cpus.model_name");
  }
  Given(r, f.ftrace_filter, "fgraph.ftrace_filter_functions", [&](int64_t v) {
    s.mutable_fgraph()->set_ftrace_filter_functions(static_cast<uint64_t>(v));
  });
  Given(r, f.filter_functions, "fgraph.available_filter_functions",
        [&](int64_t v) {
          s.mutable_fgraph()->set_available_filter_functions(
              static_cast<uint64_t>(v));
        });
  if (int64_t v = f.batch; v >= 0) {
    if (v == 0 || v > (1 << 20)) {
      return absl::InvalidArgumentError("--batch must be in 1..1048576");
    }
    r->options.batch = static_cast<uint32_t>(v);
  }
  if (int64_t v = f.sites; v >= 0) {
    r->options.sites = static_cast<uint64_t>(v);
  }
  if (double v = f.c_visit_ns; v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--c_visit_ns must be > 0");
    r->options.c_visit_seconds = v * 1e-9;
  }
  if (double v = f.latency_budget; v >= 0) {
    r->options.latency_budget_seconds = v;
  }
  absl::StatusOr<std::optional<v1::ProbeKind>> probe = ProbeFlag(f);
  if (!probe.ok()) return probe.status();
  r->probe = *probe;
  return absl::OkStatus();
}

absl::Status AddVmapInputs(const ModelFlags& f, ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  // Asking about the purge presumes a KASAN_VMALLOC kernel.
  s.mutable_kernel()->set_config_kasan_vmalloc(true);
  s.mutable_kernel()->set_config_kasan(true);
  r->given.insert("kernel.config_kasan_vmalloc");
  Given(r, f.cpus, "cpus.online", [&](int64_t v) {
    s.mutable_cpus()->set_online(static_cast<uint32_t>(v));
  });
  Given(r, f.possible_cpus, "cpus.possible", [&](int64_t v) {
    s.mutable_cpus()->set_possible(static_cast<uint32_t>(v));
  });
  GivenBool(r, f.invlpgb, "cpus.invlpgb",
            [&](bool b) { s.mutable_cpus()->set_invlpgb(b); });
  Given(r, f.unpurged_areas, "vmalloc.unpurged_areas", [&](int64_t v) {
    s.mutable_vmalloc()->set_unpurged_areas(static_cast<uint64_t>(v));
  });
  Given(r, f.shadow_page_areas, "vmalloc.unpurged_shadow_page_areas",
        [&](int64_t v) {
          s.mutable_vmalloc()->set_unpurged_shadow_page_areas(
              static_cast<uint64_t>(v));
        });
  if (int64_t v = f.page_size; v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--page_size must be > 0");
    s.mutable_kernel()->set_page_size(static_cast<uint32_t>(v));
    r->given.insert("kernel.page_size");
  }
  return absl::OkStatus();
}

// --show_stacks: the trie run on the host's page_owner stacks.
absl::Status AddShowStacks(const ModelFlags& f, ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  const std::string show_stacks = f.show_stacks;
  if (!show_stacks.empty()) {
    std::ifstream in(show_stacks, std::ios::binary);
    if (!in) {
      return absl::NotFoundError(
          absl::StrCat("--show_stacks: cannot open ", show_stacks));
    }
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<v1::TrieMeasurement> measured =
        MeasureShowStacks(text.str());
    if (!measured.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(show_stacks, ": ", measured.status().message()));
    }
    *s.mutable_trie() = *measured;
  }
  return absl::OkStatus();
}

absl::Status AddStackDepotInputs(const ModelFlags& f, ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  s.mutable_kernel()->set_config_stackdepot(true);
  r->given.insert("kernel.config_stackdepot");
  Given(r, f.pools, "stackdepot.pools", [&](int64_t v) {
    s.mutable_stackdepot()->set_pools(static_cast<uint64_t>(v));
  });
  if (int64_t v = f.max_pools; v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--max_pools must be > 0");
    s.mutable_stackdepot()->set_max_pools(static_cast<uint64_t>(v));
    s.mutable_stackdepot()->set_max_pools_source("--max_pools");
    r->given.insert("stackdepot.max_pools");
  }
  if (int64_t v = f.frames; v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--frames must be > 0");
    s.mutable_kernel()->set_config_stackdepot_max_frames(
        static_cast<uint32_t>(v));
    r->given.insert("kernel.config_stackdepot_max_frames");
  }
  if (int64_t v = f.persistent_count; v >= 0) {
    s.mutable_stackdepot()->set_persistent_count(static_cast<uint64_t>(v));
  }
  Given(r, f.persistent_bytes, "stackdepot.persistent_bytes", [&](int64_t v) {
    s.mutable_stackdepot()->set_persistent_bytes(static_cast<uint64_t>(v));
  });
  const std::string history = f.history;
  if (!history.empty()) {
    for (absl::string_view item :
         absl::StrSplit(history, ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> parts = absl::StrSplit(item, ':');
      int64_t at = 0;
      uint64_t pools = 0;
      if (!absl::SimpleAtoi(parts.first, &at) ||
          !absl::SimpleAtoi(parts.second, &pools)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--history: expected SECONDS:POOLS, got '", item, "'"));
      }
      v1::DepotSample* sample = s.add_depot_history();
      sample->mutable_at()->set_seconds(at);
      sample->set_pools(pools);
    }
    r->given.insert("depot_history");
  }
  return AddShowStacks(f, r);
}

}  // namespace

absl::StatusOr<ModelRequest> BuildModelRequest(const std::string& model,
                                               const ModelFlags& flags) {
  absl::Status st = CheckModelFlagRanges(flags);
  ModelRequest r;
  if (st.ok()) st = AddCommonInputs(flags, &r);
  if (!st.ok()) return st;
  if (model == "fgraph") {
    st = AddFgraphInputs(flags, &r);
  } else if (model == "vmap") {
    st = AddVmapInputs(flags, &r);
  } else if (model == "stackdepot") {
    st = AddStackDepotInputs(flags, &r);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown model '", model, "'"));
  }
  if (!st.ok()) return st;
  return r;
}

}  // namespace tracehealth
