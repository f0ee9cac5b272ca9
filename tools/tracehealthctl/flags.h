// The values of tracehealthctl's command flags (defined in flags.cc, part of
// the tracehealthctl binary only), read after absl::ParseCommandLine.
//
// Thread safety: reads the process's flags; call from main's thread.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_FLAGS_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/tracehealthctl/fleet_commands.h"
#include "tools/tracehealthctl/model_request.h"

namespace tracehealth {

// The command line (argv without the program) with each true|false model
// flag given bare or negated written with its value, as absl takes it:
// --preempt_rcu is --preempt_rcu=true, --nopreempt_rcu --preempt_rcu=false
// (one dash too). Nothing after "--" changes.
std::vector<std::string> WithBooleanValues(std::vector<std::string> args);

// The model and what-if flags. INVALID_ARGUMENT naming the flag for a
// true|false flag with another value ("--fgraph_active: expected
// true|false, got 'maybe'").
absl::StatusOr<ModelFlags> ModelFlagsFromCommandLine();

// The fleet commands' flags, the plan's and the model flags into `options`
// (the connection fields are left as they are); the errors of
// ModelFlagsFromCommandLine.
absl::Status FleetFlagsFromCommandLine(FleetCommands::Options* options);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_FLAGS_H_
