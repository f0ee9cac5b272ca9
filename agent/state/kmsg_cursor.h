// Where the agent is in the kernel log: the sequence number of the last
// record whose events are all in a report the agent has delivered, and the
// boot it belongs to (sequence numbers start again at each boot). Kept in
// the state directory ("kmsg_cursor", key=value: boot_id, btime, seq), so
// that a restarted agent neither reports an event twice nor misses one
// logged while it was down (unless the kernel overwrote it meanwhile).
//
// Writes are atomic but not fsynced: after a crash the cursor may be older
// and a few events are reported again, which the server stores once.
//
// Thread safety: not thread-safe; one owner.
#ifndef TRACEHEALTH_AGENT_STATE_KMSG_CURSOR_H_
#define TRACEHEALTH_AGENT_STATE_KMSG_CURSOR_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "agent/state/fgraph_memory.h"

namespace tracehealth::agent {

class KmsgCursor {
 public:
  // `state_dir` empty: kept in memory only.
  explicit KmsgCursor(std::string state_dir);

  // Loads the file. A missing one is no error; a corrupt one is dropped
  // with the returned error (callers log it as a warning).
  absl::Status Load();

  // The last delivered sequence number of `boot`; nullopt when the cursor
  // is of another boot (or of none, or `boot` is unknown).
  std::optional<uint64_t> After(const BootIdentity& boot) const;

  // Moves the cursor to `seq` of `boot` and saves it when it changed.
  absl::Status Save(const BootIdentity& boot, uint64_t seq);

 private:
  std::string path_;
  BootIdentity boot_;
  std::optional<uint64_t> seq_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_STATE_KMSG_CURSOR_H_
