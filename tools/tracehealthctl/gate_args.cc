#include "tools/tracehealthctl/gate_args.h"

#include <map>

#include "absl/flags/marshalling.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/enum_names.h"

namespace tracehealth {
namespace {

absl::Status Usage(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// One flag's value into `args`.
absl::Status SetFlag(const std::string& name, const std::string& value,
                     GateArgs* args) {
  std::string error;
  if (name == "probe") {
    std::optional<v1::ProbeKind> k = ProbeKindFromFlag(value);
    if (!k.has_value()) {
      return Usage(absl::StrCat("--probe: unknown kind '", value, "' (",
                                absl::StrJoin(ProbeKindFlags(), ", "), ")"));
    }
    args->probe = *k;
  } else if (name == "functions") {
    uint64_t n = 0;
    if (!absl::SimpleAtoi(value, &n) || n == 0) {
      return Usage(absl::StrCat("--functions: '", value,
                                "' is not a count of at least 1"));
    }
    args->functions = n;
  } else if (name == "filter") {
    if (value.empty()) return Usage("--filter: empty pattern");
    args->filter = value;
  } else if (name == "max_latency") {
    double seconds = 0;
    absl::Duration d;
    if (absl::SimpleAtod(value, &seconds)) {
      d = absl::Seconds(seconds);
    } else if (!absl::ParseFlag(value, &d, &error)) {
      return Usage(absl::StrCat("--max_latency: '", value,
                                "' is not a duration (2s, 500ms)"));
    }
    if (d <= absl::ZeroDuration()) {
      return Usage("--max_latency: must be positive");
    }
    args->max_latency = d;
  } else if (name == "socket") {
    args->socket = value;
  } else if (name == "root") {
    args->root = value;
  } else if (name == "json" || name == "help") {
    bool on = false;
    if (!absl::ParseFlag(value, &on, &error)) {
      return Usage(absl::StrCat("--", name, ": '", value, "' is not a bool"));
    }
    (name == "json" ? args->json : args->help) = on;
  } else {
    return Usage(absl::StrCat("unknown flag --", name, " (see --help)"));
  }
  return absl::OkStatus();
}

bool IsBool(const std::string& name) {
  return name == "json" || name == "help";
}

}  // namespace

absl::StatusOr<GateArgs> ParseGateArgs(const std::vector<std::string>& args) {
  GateArgs out;
  bool have_latency = false, saw_gate = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (!absl::StartsWith(a, "-") || a == "-") {
      if (a == "gate" && !saw_gate) {
        saw_gate = true;
        continue;
      }
      return Usage(absl::StrCat("unexpected argument '", a, "' (see --help)"));
    }
    a = a.substr(absl::StartsWith(a, "--") ? 2 : 1);
    std::string name = a, value;
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else if (IsBool(name)) {
      value = "true";
    } else if (absl::StartsWith(name, "no") && IsBool(name.substr(2))) {
      name = name.substr(2);
      value = "false";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return Usage(absl::StrCat("--", name, ": missing value"));
    }
    absl::Status s = SetFlag(name, value, &out);
    if (!s.ok()) return s;
    have_latency |= name == "max_latency";
  }
  if (out.help) return out;
  if (out.probe == v1::PROBE_KIND_UNSPECIFIED) {
    return Usage(absl::StrCat("--probe is required (",
                              absl::StrJoin(ProbeKindFlags(), ", "), ")"));
  }
  if (out.functions.has_value() && out.filter.has_value()) {
    return Usage("--functions and --filter: give one of them");
  }
  if (!have_latency) {
    return Usage("--max_latency is required (e.g. --max_latency=2s)");
  }
  return out;
}

const char* GateUsage() {
  return R"(usage: tracehealthctl gate --probe=KIND [--functions=N | --filter=PATTERN]
           --max_latency=DURATION [--socket=PATH] [--root=DIR] [--json]

Predicts whether attaching a probe of KIND now blocks longer than
--max_latency or risks a soft lockup / RCU stall on this host, and says
what to do instead. Asks the local tracehealth-agent on its unix socket
(--socket, default $TRACEHEALTH_GATE_SOCKET or
/var/lib/tracehealth-agent/gate.sock); with no agent answering, evaluates
in-process from /proc and tracefs (--root=DIR: a host tree, e.g. a fixture;
then no agent is asked unless --socket is given).

  --probe        function_graph, function_profiler, graph_latency,
                 kprobe_multi, kprobe_multi_return, kprobe_session, fprobe,
                 fprobe_return, kretprobe, fentry
  --functions    call sites the probe patches
  --filter       a set_ftrace_filter pattern ('vfs_*', '*read* !*readv',
                 'ext4_*:mod:ext4'), counted in available_filter_functions
  --json         the answer (prediction and mitigations) as protobuf JSON

One line on stdout says why and which path answered; mitigations go to
stderr. Exit status: 0 safe within the budget, 1 over the budget or a
stall/lockup risk, 2 unknown (inputs missing), 3 usage error.
)";
}

}  // namespace tracehealth
