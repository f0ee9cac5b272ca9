// Parsers for the kernel log as /dev/kmsg gives it
// (Documentation/ABI/testing/dev-kmsg): one record per read(2),
//
//   PRI,SEQ,TS_USEC,FLAGS[,MORE...];TEXT\n
//   [ KEY=VALUE\n ...]
//
// PRI is facility * 8 + level, SEQ the 64-bit sequence number, TS_USEC the
// monotonic timestamp in microseconds, FLAGS "-" (or "c" for a continuation
// fragment); later kernels may add comma-separated fields before the ';'
// (e.g. "caller=T123"). TEXT has the kernel's escaping: bytes below 0x20,
// 0x7f and above, and '\' itself, appear as \xNN. Lines after the first
// that begin with a space are the record's dictionary (SUBSYSTEM=, DEVICE=).
//
// Pure functions: text in, value or an error out. Thread-safe.
#ifndef TRACEHEALTH_AGENT_PARSERS_KMSG_H_
#define TRACEHEALTH_AGENT_PARSERS_KMSG_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

struct KmsgRecord {
  int facility = 0;
  int level = 0;
  uint64_t seq = 0;
  uint64_t ts_usec = 0;
  bool continuation = false;  // FLAGS "c"
  // The first line's text, escaped as logged; a view into the parsed bytes.
  absl::string_view text;
};

// The record at the start of `record` (its first line; dictionary lines
// after it are not looked at). Errors: DataLoss when the record is cut short
// (its prefix fields end without the ';' that starts the text), otherwise
// InvalidArgument (a field that is not a decimal number or is out of
// range, FLAGS empty or not letters/'-'/'+', a record starting with a
// space).
absl::StatusOr<KmsgRecord> ParseKmsgRecord(absl::string_view record);

// One line of a backtrace, as the kernel prints it after "Call Trace:":
// " alloc_retstack_tasklist+0x5a/0x1f0", " ? srso_return_thunk+0x5/0x5f",
// " foo+0x10/0x20 [mod]", "  [<ffffffff81012345>] foo+0x10/0x20" (older
// kernels). Indented (a space or an escaped tab first).
struct KmsgFrame {
  bool reliable = true;      // no "? " (a guess found on the stack)
  absl::string_view frame;   // "foo+0x10/0x20 [mod]"
  absl::string_view symbol;  // "foo", without a ".constprop.0" suffix
};
std::optional<KmsgFrame> ParseKmsgFrame(absl::string_view text);

// The function an x86 register dump's instruction pointer is in, for a
// kernel-mode one: "RIP: 0010:register_ftrace_graph+0x134/0x300". The
// backtrace under it starts at the caller (graph_trace_init+0x43/0x50 on
// Debian's 6.1, where alloc_retstack_tasklist and start_graph_tracing are
// inlined into register_ftrace_graph), so this is the only place the
// stuck function is named. Nullopt for user mode ("RIP: 0033:0x43c4d0")
// and anything else.
std::optional<KmsgFrame> ParseKmsgRipFrame(absl::string_view text);

// Whether `text` is a backtrace marker: "<IRQ>", "</IRQ>", "<TASK>",
// "</TASK>", "<NMI>", "</NMI>", "<SOFTIRQ>", "</SOFTIRQ>", "<EOI>"
// (indented).
bool IsKmsgStackMarker(absl::string_view text);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_KMSG_H_
