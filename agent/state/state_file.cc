#include "agent/state/state_file.h"

#include <sys/stat.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace tracehealth::agent {

absl::Status MakeDirs(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("empty directory name");
  std::string partial;
  for (absl::string_view part : absl::StrSplit(dir, '/')) {
    if (partial.empty() && dir[0] == '/') partial = "/";
    if (part.empty()) continue;
    absl::StrAppend(&partial, part);
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      return ::tracehealth::ErrnoToStatus(errno, partial);
    }
    partial.push_back('/');
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    return ::tracehealth::ErrnoToStatus(errno, dir);
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, ": not a directory"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    absl::string_view text) {
  std::map<std::string, std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "state file: malformed line '", line.substr(0, 64), "'"));
    }
    absl::string_view key = line.substr(0, eq);
    for (char c : key) {
      if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_') {
        return absl::InvalidArgumentError(
            absl::StrCat("state file: bad key '", key.substr(0, 64), "'"));
      }
    }
    out[std::string(key)] = std::string(line.substr(eq + 1));
  }
  return out;
}

std::string FormatKeyValues(const std::map<std::string, std::string>& kv) {
  std::string out;
  for (const auto& [k, v] : kv) absl::StrAppend(&out, k, "=", v, "\n");
  return out;
}

absl::StatusOr<std::optional<std::map<std::string, std::string>>>
ReadKeyValueFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (!text.ok()) return text.status();
  absl::StatusOr<std::map<std::string, std::string>> kv = ParseKeyValues(*text);
  if (!kv.ok()) return Annotate(kv.status(), path);
  return *std::move(kv);
}

}  // namespace tracehealth::agent
