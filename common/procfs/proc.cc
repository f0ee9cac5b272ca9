#include "common/procfs/proc.h"

#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tracehealth {
namespace {

absl::Status Bad(absl::string_view what, absl::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", detail));
}

// Value of the line "key N" (whitespace separated) in /proc/stat.
absl::StatusOr<absl::string_view> StatField(absl::string_view text,
                                            absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (f.size() >= 1 && f[0] == key) {
      if (f.size() != 2) {
        return Bad("/proc/stat", absl::StrCat("malformed '", key, "' line"));
      }
      return f[1];
    }
  }
  return Bad("/proc/stat", absl::StrCat("no '", key, "' line"));
}

std::string DecodeOctalEscapes(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' &&
        s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
        s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 +
                                      (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Loadavg> ParseLoadavg(absl::string_view text) {
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::StripAsciiWhitespace(text), absl::ByAnyChar(" \t"),
                     absl::SkipEmpty());
  if (f.size() != 5) {
    return Bad("/proc/loadavg",
               absl::StrCat("expected 5 fields, got ", f.size()));
  }
  std::vector<absl::string_view> rt = absl::StrSplit(f[3], '/');
  Loadavg out;
  if (rt.size() != 2 || !absl::SimpleAtoi(rt[0], &out.running) ||
      !absl::SimpleAtoi(rt[1], &out.total)) {
    return Bad("/proc/loadavg",
               absl::StrCat("4th field '", f[3], "' is not running/total"));
  }
  if (out.total == 0 || out.running > out.total) {
    return Bad("/proc/loadavg",
               absl::StrCat("implausible thread counts '", f[3], "'"));
  }
  return out;
}

absl::StatusOr<uint64_t> ParseStatProcesses(absl::string_view text) {
  auto v = StatField(text, "processes");
  if (!v.ok()) return v.status();
  uint64_t n;
  if (!absl::SimpleAtoi(*v, &n)) {
    return Bad("/proc/stat", absl::StrCat("processes '", *v, "' not a number"));
  }
  return n;
}

absl::StatusOr<int64_t> ParseStatBtime(absl::string_view text) {
  auto v = StatField(text, "btime");
  if (!v.ok()) return v.status();
  int64_t n;
  if (!absl::SimpleAtoi(*v, &n) || n <= 0) {
    return Bad("/proc/stat", absl::StrCat("btime '", *v, "' not a time"));
  }
  return n;
}

absl::StatusOr<double> ParseUptime(absl::string_view text) {
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty());
  double up;
  // SimpleAtod takes "nan" and "inf": neither is an uptime.
  if (f.size() != 2 || !absl::SimpleAtod(f[0], &up) || !std::isfinite(up) ||
      up < 0) {
    return Bad("/proc/uptime", "expected two non-negative numbers");
  }
  return up;
}

absl::StatusOr<int64_t> ParseSingleInteger(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  int64_t v;
  if (t.empty() || !absl::SimpleAtoi(t, &v)) {
    return Bad("integer file",
               absl::StrCat("'", t.substr(0, 32), "' is not one integer"));
  }
  return v;
}

absl::StatusOr<MeminfoVmalloc> ParseMeminfoVmalloc(absl::string_view text) {
  MeminfoVmalloc out;
  bool any = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "Vmalloc")) continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    uint64_t kb;
    if (f.size() != 3 || f[2] != "kB" || !absl::SimpleAtoi(f[1], &kb)) {
      return Bad("/proc/meminfo", absl::StrCat("malformed line '", line, "'"));
    }
    if (f[0] == "VmallocTotal:") {
      out.total_bytes = kb * 1024;
    } else if (f[0] == "VmallocUsed:") {
      out.used_bytes = kb * 1024;
    } else if (f[0] == "VmallocChunk:") {
      out.chunk_bytes = kb * 1024;
    } else {
      continue;
    }
    any = true;
  }
  if (!any) return Bad("/proc/meminfo", "no Vmalloc lines");
  return out;
}

absl::StatusOr<TracingMounts> ParseMounts(absl::string_view text) {
  TracingMounts out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 3) {
      return Bad("/proc/mounts", absl::StrCat("malformed line '", line, "'"));
    }
    if (f[2] == "tracefs") {
      std::string dir = DecodeOctalEscapes(f[1]);
      if (!out.tracefs.has_value() || dir == "/sys/kernel/tracing") {
        out.tracefs = dir;
      }
    } else if (f[2] == "debugfs" && !out.debugfs.has_value()) {
      out.debugfs = DecodeOctalEscapes(f[1]);
    }
  }
  return out;
}

std::optional<std::string> CmdlineParam(absl::string_view cmdline,
                                        absl::string_view name) {
  std::optional<std::string> found;
  absl::string_view rest = absl::StripAsciiWhitespace(cmdline);
  while (!rest.empty()) {
    // One token; double quotes group spaces, as the kernel's next_arg().
    size_t i = 0;
    bool quoted = false;
    while (i < rest.size() &&
           (quoted || (rest[i] != ' ' && rest[i] != '\t' && rest[i] != '\n'))) {
      if (rest[i] == '"') quoted = !quoted;
      ++i;
    }
    absl::string_view token = rest.substr(0, i);
    rest = absl::StripLeadingAsciiWhitespace(rest.substr(i));
    if (token == "--") break;  // the rest goes to init
    size_t eq = token.find('=');
    absl::string_view key = token.substr(0, eq);
    if (key != name) continue;
    std::string value;
    if (eq != absl::string_view::npos) {
      for (char c : token.substr(eq + 1)) {
        if (c != '"') value.push_back(c);
      }
    }
    found = value;
  }
  return found;
}

}  // namespace tracehealth
