// The lines of the kernel log that start a stall report, and the lines of
// its dump that say which CPU and task stalled, parsed from a record's text
// (escaped as the log gives it). Formats (docs/design.md §12.1):
//
//   kernel/watchdog.c   "watchdog: BUG: soft lockup - CPU#%d stuck for %us!
//                        [%s:%d]"
//   kernel/rcu/tree_stall.h
//                       "rcu: INFO: %s detected stalls on CPUs/tasks:",
//                       "rcu: INFO: %s self-detected stall on CPU",
//                       %s = rcu_sched | rcu_preempt | ...; then per CPU
//                       "rcu: \t%d-...: (...)" and "(t=%lu jiffies ...)"
//   kernel/hung_task.c  "INFO: task %s:%d blocked for more than %ld
//                        seconds."
//   lib/dump_stack.c    "CPU: %d UID: %u PID: %d Comm: %.20s %s..." (6.x;
//                        earlier without "UID: %u")
//
// A comm may hold spaces and colons: the pid is what follows its last ':'.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_AGENT_EVENTS_EVENT_HEADERS_H_
#define TRACEHEALTH_AGENT_EVENTS_EVENT_HEADERS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

// The event `text` starts (kind, seconds, cpu, comm, pid, RCU flavour,
// self-detected, stall_jiffies when on the same line), or nullopt when it
// is no header. Numbers too large for their field are left unset.
std::optional<v1::ObservedEvent> ParseEventHeader(absl::string_view text);

// "CPU: 0 UID: 0 PID: 160141 Comm: bpftrace Not tainted 6.16.12 #1".
struct TaskLine {
  std::optional<uint32_t> cpu;
  std::optional<uint32_t> pid;
  std::string comm;  // as logged (unbounded; the caller bounds it)
};
std::optional<TaskLine> ParseTaskLine(absl::string_view text);

// The CPU of an RCU stall's per-CPU line, "rcu: \x090-....: (20718 ticks
// this GP) ...".
std::optional<uint32_t> ParseRcuCpuLine(absl::string_view text);

// N of "t=N jiffies" anywhere in `text`.
std::optional<uint64_t> ParseStallJiffies(absl::string_view text);

// Whether `text` is a line of a register dump, which the kernel prints
// inside a backtrace where it crosses an interrupt ("RIP: 0010:...",
// "RAX: 0000000000000011 RBX: ...", "Code: 38 c8 ...").
bool IsRegisterLine(absl::string_view text);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_EVENTS_EVENT_HEADERS_H_
