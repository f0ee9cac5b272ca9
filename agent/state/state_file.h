// Small files in the agent's state directory: written whole and atomically
// (WriteFileAtomically, common/write_file.h), so a crash leaves either the
// old or the new content, never a mix.
//
// The key=value format holds one "key=value" pair per line; keys are
// [a-z0-9_]+, values have no newline.
//
// Thread safety: functions are thread-safe for different paths.
#ifndef TRACEHEALTH_AGENT_STATE_STATE_FILE_H_
#define TRACEHEALTH_AGENT_STATE_STATE_FILE_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/read_file.h"
#include "common/write_file.h"

namespace tracehealth::agent {

// Creates `dir` and its parents (mode 0700 for new directories).
absl::Status MakeDirs(const std::string& dir);

using ::tracehealth::ReadWholeFile;         // common/read_file.h
using ::tracehealth::WriteFileAtomically;  // common/write_file.h

// Parses key=value lines. InvalidArgument for a line without '=' or a bad
// key (the file is corrupt; callers treat it as absent, with a warning).
absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    absl::string_view text);
std::string FormatKeyValues(const std::map<std::string, std::string>& kv);

// ReadWholeFile + ParseKeyValues: nullopt when `path` does not exist; other
// errors carry the path.
absl::StatusOr<std::optional<std::map<std::string, std::string>>>
ReadKeyValueFile(const std::string& path);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_STATE_STATE_FILE_H_
