// Every flag of tracehealthctl but the connection ones (tracehealthctl.cc):
// the model and what-if flags, the fleet commands' and the plan's. The
// libraries take their values as plain structs (ModelFlags, PlanFlags,
// FleetCommands::Options).
#include "tools/tracehealthctl/flags.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

// Numeric flags use -1 for "not given": the model then treats the input as
// unknown or takes its default, exactly as for a host that could not read it.
ABSL_FLAG(std::string, kernel, "",
          "Kernel release, e.g. 6.18.2 (model: all; predict: what-if)");
ABSL_FLAG(std::string, preempt, "",
          "Preemption mode: none|voluntary|full|lazy|rt (model: fgraph, vmap; "
          "predict: what-if)");
ABSL_FLAG(
    std::string, preempt_dynamic, "",
    "A PREEMPT_DYNAMIC build: --preempt_dynamic, =true|false (model: fgraph)");
ABSL_FLAG(std::string, preempt_rcu, "",
          "CONFIG_PREEMPT_RCU: --preempt_rcu, =true|false (model: fgraph)");
ABSL_FLAG(std::string, arch, "",
          "Architecture as uname -m names it, e.g. x86_64, aarch64 (model: "
          "all)");
ABSL_FLAG(std::string, cpu_model, "",
          "CPU model name as /proc/cpuinfo says it (model: fgraph)");
ABSL_FLAG(std::string, hypervisor, "",
          "The hypervisor CPU flag: --hypervisor, =true|false (model: fgraph)");
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
ABSL_FLAG(std::string, fgraph_active, "",
          "fgraph already active: --fgraph_active, =true|false (model: fgraph; "
          "predict: what-if)");
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
          "The CPU has invlpgb: --invlpgb, =true|false (model: vmap)");
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

ABSL_FLAG(absl::Duration, max_latency, absl::ZeroDuration(),
          "plan: the longest an attach may block a host (e.g. 2s); required");
ABSL_FLAG(int32_t, wave_hosts, 20,
          "plan: hosts listed per wave, least predicted latency first");

ABSL_FLAG(std::string, hosts, "",
          "predict, plan, hosts, summary: comma-separated host ids");
ABSL_FLAG(std::string, selector, "",
          "predict, plan, hosts, summary: label selector, e.g. "
          "role=db,zone=~us-.*");
ABSL_FLAG(std::string, min_risk, "",
          "hosts: only hosts at least this risky: none|latency|warning|stall");
ABSL_FLAG(std::string, sort, "risk",
          "hosts: order by risk|host|last_seen|latency");
ABSL_FLAG(int32_t, limit, 0,
          "At most this many rows (0: the server's default, 100; plan: the "
          "worst 10 hosts)");
ABSL_FLAG(std::string, state, "",
          "alerts: pending|firing|resolved (default: pending and firing)");
ABSL_FLAG(std::string, predicted, "",
          "events: yes|no|unknown, as the models predicted them (default: "
          "all)");
ABSL_FLAG(absl::Duration, since, absl::Hours(24 * 7),
          "events: those logged this long before now");

namespace tracehealth {
namespace {

// The true|false model flags. They are text flags, "" for not given (a
// bool flag has no such state), so that absl would want a value after each:
// WithBooleanValues supplies it.
constexpr const char* kTrueFalseFlags[] = {
    "preempt_dynamic", "preempt_rcu", "hypervisor", "fgraph_active", "invlpgb",
};

// "" is not given; else true|false (absl's spellings: 1/0, yes/no too).
absl::Status TrueFalse(const char* name, const std::string& value,
                       std::optional<bool>* out) {
  if (value.empty()) return absl::OkStatus();
  bool b = false;
  if (!absl::SimpleAtob(value, &b)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": expected true|false, got '", value, "'"));
  }
  *out = b;
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> WithBooleanValues(std::vector<std::string> args) {
  for (std::string& arg : args) {
    if (arg == "--") break;
    absl::string_view name = arg;
    if (!absl::ConsumePrefix(&name, "--")) absl::ConsumePrefix(&name, "-");
    const bool negated = absl::ConsumePrefix(&name, "no");
    for (const char* flag : kTrueFalseFlags) {
      if (name == flag) {
        arg = absl::StrCat("--", flag, negated ? "=false" : "=true");
        break;
      }
    }
  }
  return args;
}

absl::StatusOr<ModelFlags> ModelFlagsFromCommandLine() {
  ModelFlags f;
  for (absl::Status st : {
           TrueFalse("preempt_dynamic", absl::GetFlag(FLAGS_preempt_dynamic),
                     &f.preempt_dynamic),
           TrueFalse("preempt_rcu", absl::GetFlag(FLAGS_preempt_rcu),
                     &f.preempt_rcu),
           TrueFalse("hypervisor", absl::GetFlag(FLAGS_hypervisor),
                     &f.hypervisor),
           TrueFalse("fgraph_active", absl::GetFlag(FLAGS_fgraph_active),
                     &f.fgraph_active),
           TrueFalse("invlpgb", absl::GetFlag(FLAGS_invlpgb), &f.invlpgb),
       }) {
    if (!st.ok()) return st;
  }
  f.kernel = absl::GetFlag(FLAGS_kernel);
  f.preempt = absl::GetFlag(FLAGS_preempt);
  f.arch = absl::GetFlag(FLAGS_arch);
  f.cpu_model = absl::GetFlag(FLAGS_cpu_model);
  f.ftrace_filter = absl::GetFlag(FLAGS_ftrace_filter);
  f.possible_cpus = absl::GetFlag(FLAGS_possible_cpus);
  f.watchdog_thresh = absl::GetFlag(FLAGS_watchdog_thresh);
  f.rcu_stall_timeout = absl::GetFlag(FLAGS_rcu_stall_timeout);
  f.threads = absl::GetFlag(FLAGS_threads);
  f.null_threads = absl::GetFlag(FLAGS_null_threads);
  f.batch = absl::GetFlag(FLAGS_batch);
  f.c_visit_ns = absl::GetFlag(FLAGS_c_visit_ns);
  f.probe = absl::GetFlag(FLAGS_probe);
  f.sites = absl::GetFlag(FLAGS_sites);
  f.filter_functions = absl::GetFlag(FLAGS_filter_functions);
  f.latency_budget = absl::GetFlag(FLAGS_latency_budget);
  f.cpus = absl::GetFlag(FLAGS_cpus);
  f.unpurged_areas = absl::GetFlag(FLAGS_unpurged_areas);
  f.shadow_page_areas = absl::GetFlag(FLAGS_shadow_page_areas);
  f.page_size = absl::GetFlag(FLAGS_page_size);
  f.pools = absl::GetFlag(FLAGS_pools);
  f.max_pools = absl::GetFlag(FLAGS_max_pools);
  f.frames = absl::GetFlag(FLAGS_frames);
  f.persistent_count = absl::GetFlag(FLAGS_persistent_count);
  f.persistent_bytes = absl::GetFlag(FLAGS_persistent_bytes);
  f.history = absl::GetFlag(FLAGS_history);
  f.show_stacks = absl::GetFlag(FLAGS_show_stacks);
  return f;
}

absl::Status FleetFlagsFromCommandLine(FleetCommands::Options* o) {
  o->hosts = absl::GetFlag(FLAGS_hosts);
  o->selector = absl::GetFlag(FLAGS_selector);
  o->min_risk = absl::GetFlag(FLAGS_min_risk);
  o->sort = absl::GetFlag(FLAGS_sort);
  o->limit = absl::GetFlag(FLAGS_limit);
  o->state = absl::GetFlag(FLAGS_state);
  o->predicted = absl::GetFlag(FLAGS_predicted);
  o->since = absl::GetFlag(FLAGS_since);
  o->plan.max_latency = absl::GetFlag(FLAGS_max_latency);
  o->plan.wave_hosts = absl::GetFlag(FLAGS_wave_hosts);
  absl::StatusOr<ModelFlags> model = ModelFlagsFromCommandLine();
  if (!model.ok()) return model.status();
  o->model = *std::move(model);
  return absl::OkStatus();
}

}  // namespace tracehealth
