// The arguments of `tracehealthctl gate`:
//
//   tracehealthctl gate --probe=KIND [--functions=N | --filter=PATTERN]
//       --max_latency=DURATION [--socket=PATH] [--root=DIR] [--json]
//
// Parsed here rather than by absl::ParseCommandLine, which exits with 1 on a
// bad flag: for the gate 1 means "unsafe", and a usage error must be 3.
// Values use absl's flag syntax (--name=value or --name value; durations as
// absl::ParseDuration takes them, "2s", "500ms", or plain seconds).
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_GATE_ARGS_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_GATE_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth {

// The agent's socket when --socket is not given: $TRACEHEALTH_GATE_SOCKET,
// else this.
inline constexpr char kDefaultGateSocket[] =
    "/var/lib/tracehealth-agent/gate.sock";

struct GateArgs {
  v1::ProbeKind probe = v1::PROBE_KIND_UNSPECIFIED;
  std::optional<uint64_t> functions;
  std::optional<std::string> filter;
  absl::Duration max_latency;
  // Empty: the default socket, unless --root is given (a fixture tree is
  // not what the live agent reads): then no agent is asked.
  std::string socket;
  std::optional<std::string> root;
  bool json = false;
  bool help = false;
};

// `args` are argv without the program name, "gate" among them and the
// gate's flags before or after it (other tracehealthctl flags are not the
// gate's and are refused). InvalidArgument with the message to print.
absl::StatusOr<GateArgs> ParseGateArgs(const std::vector<std::string>& args);

// The usage text of `tracehealthctl gate --help`.
const char* GateUsage();

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_GATE_ARGS_H_
