#include "agent/collect/thread_counts.h"

#include "common/procfs/proc.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSmallFile = 64 * 1024;
constexpr size_t kStatMax = 4 << 20;

}  // namespace

absl::StatusOr<std::string> ReadThreadCounts(const HostFs& fs,
                                             v1::ThreadCounts* t,
                                             UnknownInputs* unknown) {
  t->Clear();
  absl::StatusOr<std::string> la = fs.ReadFile("/proc/loadavg", kSmallFile);
  absl::StatusOr<Loadavg> load =
      la.ok() ? ParseLoadavg(*la) : absl::StatusOr<Loadavg>(la.status());
  if (load.ok()) {
    t->set_total(load->total);
    t->set_running(load->running);
  } else {
    AddUnknown(unknown, "threads.total", load.status().message());
  }
  absl::StatusOr<std::string> stat = fs.ReadFile("/proc/stat", kStatMax);
  absl::StatusOr<uint64_t> forks =
      stat.ok() ? ParseStatProcesses(*stat)
                : absl::StatusOr<uint64_t>(stat.status());
  if (forks.ok()) {
    t->set_forks_since_boot(*forks);
  } else {
    AddUnknown(unknown, "threads.forks_since_boot", forks.status().message());
  }
  absl::StatusOr<std::string> up = fs.ReadFile("/proc/uptime", kSmallFile);
  absl::StatusOr<double> uptime =
      up.ok() ? ParseUptime(*up) : absl::StatusOr<double>(up.status());
  if (uptime.ok()) {
    t->set_uptime_seconds(*uptime);
  } else {
    AddUnknown(unknown, "threads.uptime_seconds", uptime.status().message());
  }
  return stat;
}

}  // namespace tracehealth::agent
