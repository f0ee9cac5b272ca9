// `tracehealthctl model fgraph|stackdepot|vmap`: evaluates one model offline
// from flags (e.g. --threads 400000 --batch 32 --preempt none --kernel 6.16.0)
// and prints readable text, or protobuf JSON with --json.
//
// The flags are absl flags defined in model_request.cc; tracehealthctl's
// main parses them (absl::ParseCommandLine) and passes the remaining
// positional arguments after "model" here.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_COMMAND_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace tracehealth {

// `args` are the positional arguments after "model" (e.g. {"fgraph"}).
// `json` selects protobuf JSON output. Returns the process exit code:
// 0 on success, 2 on a usage error (message on `err`).
int RunModelCommand(const std::vector<std::string>& args, bool json,
                    std::ostream& out, std::ostream& err);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_COMMAND_H_
