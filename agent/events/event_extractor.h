// EventExtractor: finds soft lockups, RCU stalls and hung tasks in kernel
// log records and completes each with the dump that follows its header
// (docs/design.md §12.1):
//
//   watchdog: BUG: soft lockup - CPU#N stuck for Ns! [comm:pid]
//   rcu: INFO: rcu_sched self-detected stall on CPU
//   rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
//   INFO: task comm:pid blocked for more than N seconds.
//
// then "CPU: N UID: U PID: P Comm: C ...", registers, "Call Trace:",
// " <IRQ>" ... " </IRQ>", " <TASK>", frames (" func+0x5a/0x1f0", guesses as
// " ? func+..."), " </TASK>". An event completes at " </TASK>", at the next
// header, at the first line after its frames that is neither a frame, a
// marker nor a register dump, after 400 records, or when the log has had
// nothing new for a whole cycle (Idle twice). Records between a header and
// its first frame that say nothing known are skipped: other CPUs log
// meanwhile.
//
// Each event carries kmsg_seq, ts_usec, kind, seconds, stall_jiffies, cpu,
// comm, pid, the RCU flavour, the model its reliable frames attribute it to
// (attribution.h), the first 16 reliable frames (128 bytes each), the frame
// count and the header line (256 bytes); the caller adds the boot and the
// wall time. Text is kept to printable ASCII (other bytes as \xNN).
//
// Thread safety: not thread-safe; one owner.
#ifndef TRACEHEALTH_AGENT_EVENTS_EVENT_EXTRACTOR_H_
#define TRACEHEALTH_AGENT_EVENTS_EVENT_EXTRACTOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/parsers/kmsg.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

// Bounds of what one event keeps.
inline constexpr size_t kMaxEventFrames = 16;
inline constexpr size_t kMaxFrameBytes = 128;
inline constexpr size_t kMaxCommBytes = 64;
inline constexpr size_t kMaxMessageBytes = 256;

// The event whose dump is being read (EventExtractor's state). Outside the
// class so that it is complete, default initializers included, where
// std::optional asks whether it can be made.
struct OpenEvent {
  v1::ObservedEvent event;
  std::vector<std::string> symbols;  // reliable frames, innermost first
  size_t records = 1;
  bool frames_started = false;
  bool fed_since_idle = true;
};

class EventExtractor {
 public:
  struct Limits {
    // Records of one event's dump, header included.
    size_t max_block_records = 400;
    // Reliable frames looked at for the attribution.
    size_t max_symbols = 256;
  };
  EventExtractor() : EventExtractor(Limits()) {}
  explicit EventExtractor(Limits limits) : limits_(limits) {}

  // Feeds the next record, in sequence order; events it completes are
  // appended to `out`.
  void Add(const KmsgRecord& record, std::vector<v1::ObservedEvent>* out);

  // The log has nothing more for now: an event still open is completed
  // when no record came since the previous call (its dump has stopped).
  void Idle(std::vector<v1::ObservedEvent>* out);

  // The header's sequence number of the event still open, if any.
  std::optional<uint64_t> open_seq() const;

 private:
  using Open = OpenEvent;
  // Details of a line of the dump before its frames.
  void Note(absl::string_view text, Open& open);
  void Finish(std::vector<v1::ObservedEvent>* out);

  const Limits limits_;
  std::optional<Open> open_;
};

// `text` with bytes outside printable ASCII as \xNN, cut (before an
// escape, never inside one) to at most `max_bytes`.
std::string PrintableAscii(absl::string_view text, size_t max_bytes);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_EVENTS_EVENT_EXTRACTOR_H_
