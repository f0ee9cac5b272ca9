// `tracehealthctl gate`: may this probe be attached here now, within this
// budget? Asks the local tracehealth-agent's Gate (unix socket), or, when no
// agent answers, evaluates the same in-process: one collection cycle of the
// agent's collector over /proc and tracefs (--root), the same check
// (agent/gate/gate_check.h). In-process there is no history: N_null is the
// whole thread count unless fgraph is active now, and the thread trend is
// unknown.
//
// Exit status: 0 safe, 1 over the budget or a stall/lockup risk, 2 unknown,
// 3 usage error (also a request the agent calls malformed).
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_GATE_COMMAND_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_GATE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "tools/tracehealthctl/gate_args.h"

namespace tracehealth {

inline constexpr int kGateSafe = 0;
inline constexpr int kGateUnsafe = 1;
inline constexpr int kGateUnknown = 2;
inline constexpr int kGateUsage = 3;

// Whether argv names the gate: its first argument that is not a flag is
// "gate".
bool IsGateCommand(int argc, char** argv);

// The whole command from argv (program name first); the exit status.
int RunGateMain(int argc, char** argv, std::ostream& out, std::ostream& err);

// The command from parsed arguments.
int RunGate(const GateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_GATE_COMMAND_H_
