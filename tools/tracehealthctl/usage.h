// tracehealthctl's help: what each command does, its arguments, and its
// flags with their defaults and descriptions (read from the flag registry,
// so help and flags cannot disagree).
//
// Thread safety: reads the flag registry; call from main's thread.
#ifndef TRACEHEALTH_TOOLS_TRACEHEALTHCTL_USAGE_H_
#define TRACEHEALTH_TOOLS_TRACEHEALTHCTL_USAGE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tracehealth {

// The commands, in the order the help lists them.
std::vector<std::string> CtlCommands();

// Every command with a line on it, and the connection flags.
std::string CtlHelp();

// One command's help; nullopt for a command that does not exist.
std::optional<std::string> CtlCommandHelp(absl::string_view command);

}  // namespace tracehealth

#endif  // TRACEHEALTH_TOOLS_TRACEHEALTHCTL_USAGE_H_
