#include "tools/tracehealthctl/usage.h"

#include "absl/strings/str_cat.h"
#include "common/flag_help.h"

namespace tracehealth {
namespace {

struct Command {
  const char* name;
  const char* synopsis;  // after "tracehealthctl [flags] "
  const char* what;
  std::vector<std::string> flags;
};

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"predict",
       "predict [--probe=KIND] [--hosts=a,b | --selector=SEL] [what-if flags]",
       "Predicted first-attach latency and risk of a probe kind on each "
       "selected host, worst first, with a recommendation; the what-if flags "
       "re-run the model as if the host had these values.",
       {"probe", "hosts", "selector", "threads", "null_threads", "batch",
        "preempt", "kernel", "fgraph_active", "c_visit_ns", "latency_budget",
        "limit"}},
      {"plan",
       "plan --max_latency=DURATION [--probe=KIND] [--hosts=a,b | "
       "--selector=SEL] [what-if flags] [--wave_hosts=N]",
       "A rollout plan for a probe kind over the selected hosts: each host "
       "safe, over the --max_latency budget, a lockup risk or unknown; the "
       "waves (safe first, then over budget, then lockup risk after "
       "mitigation; unknown held back) with the first --wave_hosts hosts of "
       "each, and the worst --limit hosts (default 10).",
       {"max_latency", "wave_hosts", "probe", "hosts", "selector", "threads",
        "null_threads", "batch", "preempt", "kernel", "fgraph_active",
        "c_visit_ns", "latency_budget", "limit"}},
      {"hosts",
       "hosts [--hosts=a,b | --selector=SEL] [--min_risk=R] [--sort=S]",
       "Every selected host with its worst risk, attach latency, threads, "
       "kernel, stack depot budget and purge time.",
       {"hosts", "selector", "min_risk", "sort", "probe", "limit"}},
      {"host",
       "host HOST_ID",
       "One host: labels, times, kernel, and every prediction with its "
       "explanation.",
       {}},
      {"summary",
       "summary [--hosts=a,b | --selector=SEL]",
       "Host counts by risk, stale hosts, firing alerts and the worst hosts.",
       {"hosts", "selector", "probe", "limit"}},
      {"alerts",
       "alerts [--state=STATE]",
       "The server's alerts (pending and firing unless --state says).",
       {"state", "limit"}},
      {"events",
       "events [HOST_ID] [--predicted=yes|no|unknown] [--since=168h]",
       "Soft lockups, RCU stalls and hung tasks the agents read from their "
       "kernel logs, newest first, each with the model it is attributed to "
       "and whether that model predicted it (no: a model miss).",
       {"predicted", "since", "limit"}},
      {"model",
       "model fgraph|stackdepot|vmap [model flags]",
       "Evaluates one model offline from flags, without a server (e.g. "
       "model fgraph --threads=400000 --batch=32 --preempt=none "
       "--kernel=6.16.0).",
       {"kernel",
        "preempt",
        "preempt_dynamic",
        "preempt_rcu",
        "arch",
        "cpu_model",
        "hypervisor",
        "ftrace_filter",
        "possible_cpus",
        "watchdog_thresh",
        "rcu_stall_timeout",
        "threads",
        "null_threads",
        "fgraph_active",
        "batch",
        "c_visit_ns",
        "probe",
        "sites",
        "filter_functions",
        "latency_budget",
        "cpus",
        "invlpgb",
        "unpurged_areas",
        "shadow_page_areas",
        "page_size",
        "pools",
        "max_pools",
        "frames",
        "persistent_count",
        "persistent_bytes",
        "history",
        "show_stacks"}},
      {"gate",
       "gate [gate flags] (its own: tracehealthctl gate --help)",
       "Asks the local agent whether attaching a probe is safe now; exit 0 "
       "safe, 1 unsafe, 2 unknown, 3 usage.",
       {}},
      {"help", "help [COMMAND]", "This help, or one command's.", {}},
  };
  return *commands;
}

const std::vector<std::string>& ConnectionFlags() {
  static const auto* flags = new std::vector<std::string>{
      "server",   "json",    "token_file",      "tls_ca",
      "tls_cert", "tls_key", "tls_server_name", "timeout"};
  return *flags;
}

}  // namespace

std::vector<std::string> CtlCommands() {
  std::vector<std::string> out;
  for (const Command& c : Commands()) out.push_back(c.name);
  return out;
}

std::string CtlHelp() {
  std::string out =
      "tracehealthctl: the operator's client of a tracehealth-server "
      "(FleetQuery API), and\nthe models offline.\n\n"
      "usage: tracehealthctl [flags] COMMAND [arguments]\n\nCommands:\n";
  for (const Command& c : Commands()) {
    absl::StrAppend(&out, "  ", c.synopsis, "\n      ", c.what, "\n");
  }
  absl::StrAppend(&out, "\nFlags of every command:\n",
                  FlagEntries(ConnectionFlags()),
                  "\n`tracehealthctl COMMAND --help` lists a command's own "
                  "flags. Exit codes: 0 done, 1 the call failed, 2 bad "
                  "arguments.\n");
  return out;
}

std::optional<std::string> CtlCommandHelp(absl::string_view command) {
  for (const Command& c : Commands()) {
    if (command != c.name) continue;
    std::string out = absl::StrCat("usage: tracehealthctl [flags] ", c.synopsis,
                                   "\n\n", c.what, "\n");
    if (!c.flags.empty()) {
      absl::StrAppend(&out, "\nFlags:\n", FlagEntries(c.flags));
    }
    absl::StrAppend(&out, "\nFlags of every command:\n",
                    FlagEntries(ConnectionFlags()));
    return out;
  }
  return std::nullopt;
}

}  // namespace tracehealth
