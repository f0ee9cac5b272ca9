#include "tools/tracehealthctl/model_request.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/enum_names.h"
#include "common/kernel/release.h"
#include "common/models/fgraph/fgraph_walk.h"
#include "common/models/stackdepot/stack_depot.h"

// Numeric flags use -1 for "not given": the model then treats the input as
// unknown or takes its default, exactly as for a host that could not read it.
ABSL_FLAG(std::string, kernel, "",
          "Kernel release, e.g. 6.18.2 (model: all; predict: what-if)");
ABSL_FLAG(std::string, preempt, "",
          "Preemption mode: none|voluntary|full|lazy|rt (model: fgraph, vmap; "
          "predict: what-if)");
ABSL_FLAG(std::string, preempt_dynamic, "",
          "true|false: a PREEMPT_DYNAMIC build (model: fgraph)");
ABSL_FLAG(std::string, preempt_rcu, "",
          "true|false: CONFIG_PREEMPT_RCU (model: fgraph)");
ABSL_FLAG(std::string, arch, "",
          "Architecture as uname -m names it, e.g. x86_64, aarch64 (model: "
          "all)");
ABSL_FLAG(std::string, cpu_model, "",
          "CPU model name as /proc/cpuinfo says it (model: fgraph)");
ABSL_FLAG(std::string, hypervisor, "",
          "true|false: the hypervisor CPU flag (model: fgraph)");
ABSL_FLAG(int64_t, ftrace_filter, -1,
          "Functions in set_ftrace_filter, 0 for none (model: fgraph)");
ABSL_FLAG(int64_t, possible_cpus, -1, "Possible CPUs (model: vmap)");
ABSL_FLAG(int64_t, watchdog_thresh, -1,
          "watchdog_thresh in seconds (default 10)");
ABSL_FLAG(int64_t, rcu_stall_timeout, -1,
          "rcu_cpu_stall_timeout in seconds (default 21)");
ABSL_FLAG(int64_t, threads, -1,
          "Threads on the host, N_total (model: fgraph; predict: what-if)");
ABSL_FLAG(
    int64_t, null_threads, -1,
    "Threads without a shadow stack, N_null (default: all when fgraph was "
    "never active) (model: fgraph; predict: what-if)");
ABSL_FLAG(
    std::string, fgraph_active, "",
    "true|false: fgraph already active (model: fgraph; predict: what-if)");
ABSL_FLAG(
    int64_t, batch, -1,
    "FTRACE_RETSTACK_ALLOC_SIZE, e.g. 1024 (model: fgraph; predict: what-if)");
ABSL_FLAG(double, c_visit_ns, -1,
          "Per-task visit cost in ns (model: fgraph; predict: what-if)");
ABSL_FLAG(
    std::string, probe, "",
    "Probe kind: function_graph|function_profiler|graph_latency|kprobe_multi|"
    "kprobe_multi_return|kprobe_session|fprobe|fprobe_return|kretprobe|fentry "
    "(model fgraph: default all; predict, hosts, summary: default "
    "kprobe_multi_return)");
ABSL_FLAG(int64_t, sites, -1, "Call sites the probe patches (model: fgraph)");
ABSL_FLAG(int64_t, filter_functions, -1,
          "Lines of available_filter_functions (model: fgraph)");
ABSL_FLAG(
    double, latency_budget, -1,
    "Latency budget in seconds for the inverse prediction (model: fgraph; "
    "predict: what-if)");
ABSL_FLAG(int64_t, cpus, -1, "Online CPUs (model: vmap)");
ABSL_FLAG(std::string, invlpgb, "",
          "true|false: CPU has invlpgb (model: vmap)");
ABSL_FLAG(int64_t, unpurged_areas, -1,
          "Lazily freed vmalloc areas (model: vmap)");
ABSL_FLAG(int64_t, shadow_page_areas, -1,
          "Of those, areas owning a whole KASAN shadow page (model: vmap)");
ABSL_FLAG(int64_t, page_size, -1,
          "Page size in bytes (default 4096) (model: vmap)");
ABSL_FLAG(int64_t, pools, -1, "Stack depot pools in use (model: stackdepot)");
ABSL_FLAG(int64_t, max_pools, -1,
          "stack_depot_max_pools (default 8192) (model: stackdepot)");
ABSL_FLAG(int64_t, frames, -1,
          "CONFIG_STACKDEPOT_MAX_FRAMES (default 64) (model: stackdepot)");
ABSL_FLAG(int64_t, persistent_count, -1,
          "Persistent stack records (model: stackdepot)");
ABSL_FLAG(int64_t, persistent_bytes, -1,
          "Persistent record bytes (model: stackdepot)");
ABSL_FLAG(std::string, history, "",
          "Pool samples 'SECONDS:POOLS,...' (oldest first) for growth (model: "
          "stackdepot)");
ABSL_FLAG(std::string, show_stacks, "",
          "A page_owner_stacks/show_stacks file to run the trie on (model: "
          "stackdepot)");

namespace tracehealth {

absl::StatusOr<std::optional<bool>> BoolFlag(const std::string& name,
                                             const std::string& value) {
  if (value.empty()) return std::optional<bool>();
  bool b = false;
  if (!absl::SimpleAtob(value, &b)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": expected true|false, got '", value, "'"));
  }
  return std::optional<bool>(b);
}

absl::StatusOr<std::optional<v1::PreemptMode>> PreemptFlag() {
  const std::string preempt =
      absl::AsciiStrToLower(absl::GetFlag(FLAGS_preempt));
  if (preempt.empty()) return std::optional<v1::PreemptMode>();
  std::optional<v1::PreemptMode> mode = PreemptModeFromName(preempt);
  if (!mode.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--preempt: expected none|voluntary|full|lazy|rt, got '",
                     preempt, "'"));
  }
  return mode;
}

absl::StatusOr<std::optional<v1::ProbeKind>> ProbeFlag() {
  const std::string probe = absl::AsciiStrToLower(absl::GetFlag(FLAGS_probe));
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

// A true|false flag the user gave ("": not given): `set` puts it in the
// request and basis input `input` (if any) is marked given. Errors:
// InvalidArgument naming the flag.
template <typename Set>
absl::Status GivenBool(ModelRequest* r, const char* name,
                       const std::string& value, const char* input, Set set) {
  absl::StatusOr<std::optional<bool>> b = BoolFlag(name, value);
  if (!b.ok()) return b.status();
  if (b->has_value()) {
    set(**b);
    if (*input) r->given.insert(input);
  }
  return absl::OkStatus();
}

absl::Status NonNegative(const std::string& name, int64_t value) {
  if (value < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be >= 0"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckModelFlagRanges() {
  const std::pair<const char*, int64_t> numeric[] = {
      {"watchdog_thresh", absl::GetFlag(FLAGS_watchdog_thresh)},
      {"rcu_stall_timeout", absl::GetFlag(FLAGS_rcu_stall_timeout)},
      {"threads", absl::GetFlag(FLAGS_threads)},
      {"null_threads", absl::GetFlag(FLAGS_null_threads)},
      {"batch", absl::GetFlag(FLAGS_batch)},
      {"sites", absl::GetFlag(FLAGS_sites)},
      {"filter_functions", absl::GetFlag(FLAGS_filter_functions)},
      {"cpus", absl::GetFlag(FLAGS_cpus)},
      {"possible_cpus", absl::GetFlag(FLAGS_possible_cpus)},
      {"ftrace_filter", absl::GetFlag(FLAGS_ftrace_filter)},
      {"unpurged_areas", absl::GetFlag(FLAGS_unpurged_areas)},
      {"shadow_page_areas", absl::GetFlag(FLAGS_shadow_page_areas)},
      {"page_size", absl::GetFlag(FLAGS_page_size)},
      {"pools", absl::GetFlag(FLAGS_pools)},
      {"max_pools", absl::GetFlag(FLAGS_max_pools)},
      {"frames", absl::GetFlag(FLAGS_frames)},
      {"persistent_count", absl::GetFlag(FLAGS_persistent_count)},
      {"persistent_bytes", absl::GetFlag(FLAGS_persistent_bytes)},
  };
  for (const auto& [name, value] : numeric) {
    absl::Status st = NonNegative(name, value);
    if (!st.ok()) return st;
  }
  // No kernel has more threads than PID_MAX_LIMIT.
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"threads",
                                        absl::GetFlag(FLAGS_threads)},
        {"null_threads", absl::GetFlag(FLAGS_null_threads)}}) {
    if (value > static_cast<int64_t>(kPidMaxLimit)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " must be at most ", kPidMaxLimit, " (PID_MAX_LIMIT)"));
    }
  }
  const std::pair<const char*, double> real[] = {
      {"c_visit_ns", absl::GetFlag(FLAGS_c_visit_ns)},
      {"latency_budget", absl::GetFlag(FLAGS_latency_budget)},
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
absl::Status AddCommonInputs(ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  const std::string kernel = absl::GetFlag(FLAGS_kernel);
  if (!kernel.empty()) {
    absl::StatusOr<KernelRelease> release = ParseKernelRelease(kernel);
    if (!release.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kernel: ", release.status().message()));
    }
    s.mutable_kernel()->set_release(kernel);
    r->given.insert("kernel.release");
  }
  absl::StatusOr<std::optional<v1::PreemptMode>> mode = PreemptFlag();
  if (!mode.ok()) return mode.status();
  if (mode->has_value()) {
    s.mutable_kernel()->set_preempt_mode(**mode);
    s.mutable_kernel()->set_preempt_source("--preempt");
    r->given.insert("kernel.preempt_mode");
  }
  const std::string arch = absl::GetFlag(FLAGS_arch);
  if (!arch.empty()) {
    s.mutable_kernel()->set_arch(arch);
    r->given.insert("kernel.arch");
  }
  Given(r, absl::GetFlag(FLAGS_watchdog_thresh), "thresholds.watchdog_thresh",
        [&](int64_t v) {
          s.mutable_thresholds()->set_watchdog_thresh_seconds(
              static_cast<uint32_t>(v));
        });
  Given(r, absl::GetFlag(FLAGS_rcu_stall_timeout),
        "thresholds.rcu_cpu_stall_timeout", [&](int64_t v) {
          s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(
              static_cast<uint32_t>(v));
        });
  return absl::OkStatus();
}

absl::Status AddFgraphInputs(ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  Given(r, absl::GetFlag(FLAGS_threads), "threads.total", [&](int64_t v) {
    s.mutable_threads()->set_total(static_cast<uint64_t>(v));
  });
  Given(r, absl::GetFlag(FLAGS_null_threads), "fgraph.null_threads_bound",
        [&](int64_t v) {
          s.mutable_fgraph()->set_null_threads_bound(static_cast<uint64_t>(v));
          s.mutable_fgraph()->set_null_threads_basis("given by --null_threads");
        });
  v1::KernelInfo* kernel = s.mutable_kernel();
  for (absl::Status st : {
           GivenBool(r, "fgraph_active", absl::GetFlag(FLAGS_fgraph_active),
                     "fgraph.active",
                     [&](bool b) { s.mutable_fgraph()->set_active(b); }),
           GivenBool(r, "preempt_dynamic", absl::GetFlag(FLAGS_preempt_dynamic),
                     "kernel.preempt_dynamic",
                     [&](bool b) { kernel->set_preempt_dynamic(b); }),
           GivenBool(r, "preempt_rcu", absl::GetFlag(FLAGS_preempt_rcu),
                     "kernel.config_preempt_rcu",
                     [&](bool b) { kernel->set_config_preempt_rcu(b); }),
           GivenBool(r, "hypervisor", absl::GetFlag(FLAGS_hypervisor), "",
                     [&](bool b) { s.mutable_cpus()->set_hypervisor(b); }),
       }) {
    if (!st.ok()) return st;
  }
  const std::string cpu_model = absl::GetFlag(FLAGS_cpu_model);
  if (!cpu_model.empty()) {
    s.mutable_cpus()->set_model_name(cpu_model);
    r->given.insert("cpus.model_name");
  }
  Given(r, absl::GetFlag(FLAGS_ftrace_filter), "fgraph.ftrace_filter_functions",
        [&](int64_t v) {
          s.mutable_fgraph()->set_ftrace_filter_functions(
              static_cast<uint64_t>(v));
        });
  Given(r, absl::GetFlag(FLAGS_filter_functions),
        "fgraph.available_filter_functions", [&](int64_t v) {
          s.mutable_fgraph()->set_available_filter_functions(
              static_cast<uint64_t>(v));
        });
  if (int64_t v = absl::GetFlag(FLAGS_batch); v >= 0) {
    if (v == 0 || v > (1 << 20)) {
      return absl::InvalidArgumentError("--batch must be in 1..1048576");
    }
    r->options.batch = static_cast<uint32_t>(v);
  }
  if (int64_t v = absl::GetFlag(FLAGS_sites); v >= 0) {
    r->options.sites = static_cast<uint64_t>(v);
  }
  if (double v = absl::GetFlag(FLAGS_c_visit_ns); v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--c_visit_ns must be > 0");
    r->options.c_visit_seconds = v * 1e-9;
  }
  if (double v = absl::GetFlag(FLAGS_latency_budget); v >= 0) {
    r->options.latency_budget_seconds = v;
  }
  absl::StatusOr<std::optional<v1::ProbeKind>> probe = ProbeFlag();
  if (!probe.ok()) return probe.status();
  r->probe = *probe;
  return absl::OkStatus();
}

absl::Status AddVmapInputs(ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  // Asking about the purge presumes a KASAN_VMALLOC kernel.
  s.mutable_kernel()->set_config_kasan_vmalloc(true);
  s.mutable_kernel()->set_config_kasan(true);
  r->given.insert("kernel.config_kasan_vmalloc");
  Given(r, absl::GetFlag(FLAGS_cpus), "cpus.online", [&](int64_t v) {
    s.mutable_cpus()->set_online(static_cast<uint32_t>(v));
  });
  Given(r, absl::GetFlag(FLAGS_possible_cpus), "cpus.possible", [&](int64_t v) {
    s.mutable_cpus()->set_possible(static_cast<uint32_t>(v));
  });
  absl::Status st =
      GivenBool(r, "invlpgb", absl::GetFlag(FLAGS_invlpgb), "cpus.invlpgb",
                [&](bool b) { s.mutable_cpus()->set_invlpgb(b); });
  if (!st.ok()) return st;
  Given(r, absl::GetFlag(FLAGS_unpurged_areas), "vmalloc.unpurged_areas",
        [&](int64_t v) {
          s.mutable_vmalloc()->set_unpurged_areas(static_cast<uint64_t>(v));
        });
  Given(r, absl::GetFlag(FLAGS_shadow_page_areas),
        "vmalloc.unpurged_shadow_page_areas", [&](int64_t v) {
          s.mutable_vmalloc()->set_unpurged_shadow_page_areas(
              static_cast<uint64_t>(v));
        });
  if (int64_t v = absl::GetFlag(FLAGS_page_size); v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--page_size must be > 0");
    s.mutable_kernel()->set_page_size(static_cast<uint32_t>(v));
    r->given.insert("kernel.page_size");
  }
  return absl::OkStatus();
}

// --show_stacks: the trie run on the host's page_owner stacks.
absl::Status AddShowStacks(ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  const std::string show_stacks = absl::GetFlag(FLAGS_show_stacks);
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

absl::Status AddStackDepotInputs(ModelRequest* r) {
  v1::HostSnapshot& s = r->snapshot;
  s.mutable_kernel()->set_config_stackdepot(true);
  r->given.insert("kernel.config_stackdepot");
  Given(r, absl::GetFlag(FLAGS_pools), "stackdepot.pools", [&](int64_t v) {
    s.mutable_stackdepot()->set_pools(static_cast<uint64_t>(v));
  });
  if (int64_t v = absl::GetFlag(FLAGS_max_pools); v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--max_pools must be > 0");
    s.mutable_stackdepot()->set_max_pools(static_cast<uint64_t>(v));
    s.mutable_stackdepot()->set_max_pools_source("--max_pools");
    r->given.insert("stackdepot.max_pools");
  }
  if (int64_t v = absl::GetFlag(FLAGS_frames); v >= 0) {
    if (v == 0) return absl::InvalidArgumentError("--frames must be > 0");
    s.mutable_kernel()->set_config_stackdepot_max_frames(
        static_cast<uint32_t>(v));
    r->given.insert("kernel.config_stackdepot_max_frames");
  }
  if (int64_t v = absl::GetFlag(FLAGS_persistent_count); v >= 0) {
    s.mutable_stackdepot()->set_persistent_count(static_cast<uint64_t>(v));
  }
  Given(
      r, absl::GetFlag(FLAGS_persistent_bytes), "stackdepot.persistent_bytes",
      [&](int64_t v) {
        s.mutable_stackdepot()->set_persistent_bytes(static_cast<uint64_t>(v));
      });
  const std::string history = absl::GetFlag(FLAGS_history);
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
  return AddShowStacks(r);
}

}  // namespace

absl::StatusOr<ModelRequest> BuildModelRequest(const std::string& model) {
  absl::Status st = CheckModelFlagRanges();
  ModelRequest r;
  if (st.ok()) st = AddCommonInputs(&r);
  if (!st.ok()) return st;
  if (model == "fgraph") {
    st = AddFgraphInputs(&r);
  } else if (model == "vmap") {
    st = AddVmapInputs(&r);
  } else if (model == "stackdepot") {
    st = AddStackDepotInputs(&r);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown model '", model, "'"));
  }
  if (!st.ok()) return st;
  return r;
}

}  // namespace tracehealth
