// Parsers for CPU topology files: /sys/devices/system/cpu/online (a CPU list
// such as "0-3,8-11") and /proc/cpuinfo (flags, model name).
//
// Pure functions; errors are InvalidArgument naming what was wrong.
#ifndef TRACEHEALTH_AGENT_PARSERS_CPU_H_
#define TRACEHEALTH_AGENT_PARSERS_CPU_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

// Number of CPUs in a kernel CPU list ("0", "0-3,8-11", "0-255\n").
// Errors: empty list, reversed or malformed ranges, overlapping ranges, more
// than 1,048,576 CPUs.
absl::StatusOr<uint32_t> ParseCpuListCount(absl::string_view text);

// From /proc/cpuinfo: whether the first CPU's flags include `invlpgb` and
// `hypervisor` (x86 "flags" line; on other architectures the "Features"
// line), and its "model name". Error when no processor block has a
// flags/Features line.
struct CpuInfoFacts {
  bool invlpgb = false;
  bool hypervisor = false;
  std::optional<std::string> model_name;
};
absl::StatusOr<CpuInfoFacts> ParseCpuInfo(absl::string_view text);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_CPU_H_
