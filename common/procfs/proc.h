// Parsers for small procfs files: /proc/loadavg, /proc/stat, /proc/uptime,
// /proc/meminfo, /proc/mounts, /proc/cmdline and single-integer sysctl or
// module-parameter files.
//
// Pure functions: text in, value or InvalidArgument (naming the file kind and
// what was wrong) out. Thread-safe.
#ifndef TRACEHEALTH_COMMON_PROCFS_PROC_H_
#define TRACEHEALTH_COMMON_PROCFS_PROC_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth {

// /proc/loadavg: "0.05 0.18 0.10 1/145 6695"; the 4th field is
// "runnable/total" scheduling entities (threads).
struct Loadavg {
  uint64_t running = 0;
  uint64_t total = 0;
};
absl::StatusOr<Loadavg> ParseLoadavg(absl::string_view text);

// /proc/stat "processes N": forks since boot.
absl::StatusOr<uint64_t> ParseStatProcesses(absl::string_view text);

// /proc/stat "btime N": boot time, seconds since the epoch.
absl::StatusOr<int64_t> ParseStatBtime(absl::string_view text);

// /proc/uptime: "12345.67 23456.78"; the first field, seconds.
absl::StatusOr<double> ParseUptime(absl::string_view text);

// A file holding one decimal integer and a newline
// (/proc/sys/kernel/watchdog_thresh, rcu_cpu_stall_timeout, ...).
absl::StatusOr<int64_t> ParseSingleInteger(absl::string_view text);

// /proc/meminfo Vmalloc* lines ("VmallocUsed:   15596 kB"), in bytes. A field
// missing from the text stays unset; no Vmalloc line at all is an error.
struct MeminfoVmalloc {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> used_bytes;
  std::optional<uint64_t> chunk_bytes;
};
absl::StatusOr<MeminfoVmalloc> ParseMeminfoVmalloc(absl::string_view text);

// Mount points of tracefs and debugfs in /proc/mounts (octal escapes such as
// "\040" decoded). When several tracefs mounts exist, /sys/kernel/tracing is
// preferred, then the first one. Lines with fewer than three fields are an
// error; a table with neither filesystem is not.
struct TracingMounts {
  std::optional<std::string> tracefs;
  std::optional<std::string> debugfs;
};
absl::StatusOr<TracingMounts> ParseMounts(absl::string_view text);

// Value of `name=` on a kernel command line (last occurrence wins, as for
// most kernel parameters); nullopt when absent. Quoted values keep their
// content without the quotes.
std::optional<std::string> CmdlineParam(absl::string_view cmdline,
                                        absl::string_view name);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_PROCFS_PROC_H_
