// --help for the project's programs: a usage text and the program's own
// flags (name, default, description), printed to stdout with exit code 0.
//
// absl's own --help lists only flags defined in a file named after the
// program (tracehealth-server.cc), which none of ours is, and exits 1; each
// main() asks WantsHelp first and prints FlagHelp instead. --helpfull stays
// absl's (every flag of every library).
//
// Thread safety: read the flag registry; call from main's thread.
#ifndef TRACEHEALTH_COMMON_FLAG_HELP_H_
#define TRACEHEALTH_COMMON_FLAG_HELP_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tracehealth {

// True when argv (before a "--") holds --help, -help, -h or --help=true.
bool WantsHelp(int argc, char** argv);

// argv without its help arguments (those WantsHelp looks for), for absl to
// parse the rest.
std::vector<char*> WithoutHelp(int argc, char** argv);

// `usage`, a blank line, then "Flags:" and one entry per flag defined in a
// file whose path ends with one of `files` ("server/main.cc"), sorted by
// name: "  --name=DEFAULT" and the description indented below it.
std::string FlagHelp(absl::string_view usage,
                     const std::vector<std::string>& files);

// The entries of the flags named in `names`, in that order (unknown names
// are skipped), as FlagHelp prints them.
std::string FlagEntries(const std::vector<std::string>& names);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_FLAG_HELP_H_
