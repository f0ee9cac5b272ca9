// KmsgEvents: the observed events of each report (docs/design.md §12.1).
//
// Each cycle (Fill) it reads the kernel log's new records (KmsgReader),
// finds the soft lockups, RCU stalls and hung tasks in them
// (EventExtractor), dates each by the boot time (/proc/stat btime plus the
// record's timestamp) and names its boot (/proc/sys/kernel/random/boot_id),
// and puts the oldest waiting ones, at most max_events_per_report, into the
// report, with the reading's counters in health.kmsg. The events stay
// waiting until the report is delivered (Delivered: spooled, or printed);
// a report that was not delivered leaves them for the next one. Once
// max_pending are waiting, reading stops until reports take some: the rest
// stays in the kernel's buffer.
//
// Where it is in the log is kept per boot in the state directory
// (KmsgCursor) and only moves past events that were delivered: the cursor
// stops before the oldest event still waiting, and before an event whose
// dump is still being logged. A restarted agent goes on from there, so an
// event logged while it was down is reported by its first report; one it
// had delivered is not reported again (after a crash, one may be: the
// server stores it once). The first start on a boot reads all the log
// still holds.
//
// A log that cannot be read (none under a fixture root, no permission)
// leaves the report without events and says why in health.kmsg.error; it
// is read again next cycle.
//
// Thread safety: not thread-safe; one owner. `fs` is not owned.
#ifndef TRACEHEALTH_AGENT_EVENTS_KMSG_EVENTS_H_
#define TRACEHEALTH_AGENT_EVENTS_KMSG_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "agent/collect/kmsg_reader.h"
#include "agent/events/event_extractor.h"
#include "agent/state/fgraph_memory.h"
#include "agent/state/kmsg_cursor.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

struct KmsgEventsOptions {
  // Where the cursor is kept; "" keeps it in memory only.
  std::string state_dir;
  size_t max_events_per_report = 16;
  size_t max_pending = 256;
  KmsgReader::Options read;
};

class KmsgEvents {
 public:
  KmsgEvents(const HostFs* fs, KmsgEventsOptions options);

  // Reads what is new and fills report->observed_events and
  // report->health().kmsg.
  void Fill(v1::HostReport* report);

  // The report of the last Fill was delivered: its events are done with,
  // and the cursor moves (and is saved) past them.
  void Delivered();

  // Problems with the agent's own state and unexpected read errors since
  // the last call, for the agent's log.
  std::vector<std::string> TakeWarnings();

 private:
  void Start();
  void ReadLog();
  void OnRecord(const KmsgRecord& record);
  void Take(std::vector<v1::ObservedEvent>* done);
  // The last sequence number all of whose events are delivered.
  std::optional<uint64_t> DeliveredThrough() const;

  const HostFs* const fs_;
  const KmsgEventsOptions options_;
  KmsgReader reader_;
  EventExtractor extractor_;
  KmsgCursor cursor_;
  bool started_ = false;
  BootIdentity boot_;
  std::string boot_name_;
  // Records up to this were delivered before this run (the saved cursor).
  std::optional<uint64_t> after_;
  std::optional<uint64_t> last_seq_;
  std::deque<v1::ObservedEvent> pending_;
  size_t in_flight_ = 0;  // the first pending ones, in the last report
  uint64_t records_ = 0;
  uint64_t lost_ = 0;
  uint64_t events_ = 0;
  std::string error_;
  std::string warned_error_;
  std::vector<std::string> warnings_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_EVENTS_KMSG_EVENTS_H_
