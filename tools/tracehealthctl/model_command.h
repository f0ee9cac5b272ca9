// `tracehealthctl model fgraph|stackdepot|vmap`: evaluates one model offline
// from flags (e.g. --threads 400000 --batch 32 --preempt none --kernel 6.16.0)
// and prints readable text, or protobuf JSON with --json.
//
// tracehealthctl's main parses the flags (flags.cc) and passes their values
// and the positional arguments after "model" here.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_COMMAND_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "tools/tracehealthctl/model_request.h"

namespace tracehealth {

// `args` are the positional arguments after "model" (e.g. {"fgraph"}).
// `json` selects protobuf JSON output; `flags` are the model flags' values.
// Returns the process exit code: 0 on success, 2 on a usage error (message
// on `err`).
int RunModelCommand(const std::vector<std::string>& args, bool json,
                    const ModelFlags& flags, std::ostream& out,
                    std::ostream& err);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_MODEL_COMMAND_H_
