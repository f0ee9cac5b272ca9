// When the agent last saw fgraph active on this host, persisted in the state
// directory ("fgraph_last_active", key=value), and the N_null bound derived
// from it (docs/design.md §3.1):
//
//   fgraph active now                  -> N_null = 0
//   seen active earlier in this boot   -> N_null <= min(N_total,
//                                           forks_now - forks_at_last_active)
//   never seen active since boot       -> N_null = N_total
//
// Shadow stacks are freed only when a task exits, and every task forked
// while fgraph is active gets one, so only tasks forked after the last
// active moment can be NULL. A record from a previous boot (different
// boot_id, or btime when boot_id is unavailable) is stale and ignored.
//
// Thread safety: not thread-safe; one owner.
#ifndef TRACEHEALTH_AGENT_STATE_FGRAPH_MEMORY_H_
#define TRACEHEALTH_AGENT_STATE_FGRAPH_MEMORY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tracehealth::agent {

// Identity of the running boot.
struct BootIdentity {
  std::string boot_id;           // /proc/sys/kernel/random/boot_id, or ""
  std::optional<int64_t> btime;  // /proc/stat btime
  bool known() const { return !boot_id.empty() || btime.has_value(); }
  // Same boot: equal boot ids when both have one, else btime within 2 s.
  bool Same(const BootIdentity& other) const;
};

// The boot identity as "boot_id" and "btime" keys of a key=value state file.
void PutBootIdentity(const BootIdentity& boot,
                     std::map<std::string, std::string>* kv);
BootIdentity GetBootIdentity(const std::map<std::string, std::string>& kv);

struct NullBound {
  uint64_t bound = 0;
  std::string basis;
};

// The bound from one moment's observation and the record of the current
// boot (`last_active_at` and `forks_at_last_active`, both or neither):
// the rules above, with `active` nullopt computed as if inactive (an upper
// bound, the basis saying so). Nullopt when not active and the thread count
// is unknown. A pure function; Observe() uses it, and so does a read between
// cycles that must not touch the record.
std::optional<NullBound> BoundNullThreads(
    std::optional<bool> active, std::optional<uint64_t> threads_total,
    std::optional<uint64_t> forks, std::optional<absl::Time> last_active_at,
    std::optional<uint64_t> forks_at_last_active);

class FgraphMemory {
 public:
  // `state_dir` empty: nothing persisted (remembered for this process only).
  explicit FgraphMemory(std::string state_dir);

  // Loads the persisted record. A missing file is not an error; a corrupt
  // one is dropped with the returned warning status (callers log it).
  absl::Status Load();

  // Records the observation of one cycle and returns the N_null bound.
  // `active`: fgraph active now (nullopt: could not tell; the bound is then
  // computed as if inactive, which is an upper bound). `threads_total` and
  // `forks` may be unknown (nullopt): no bound then (nullopt returned)
  // unless active. Persisting errors are returned in `*persist_error`.
  std::optional<NullBound> Observe(const BootIdentity& boot,
                                   std::optional<bool> active, absl::Time now,
                                   std::optional<uint64_t> threads_total,
                                   std::optional<uint64_t> forks,
                                   absl::Status* persist_error);

  // The record for the current boot, if any.
  std::optional<absl::Time> last_active_at() const { return last_active_at_; }
  std::optional<uint64_t> forks_at_last_active() const {
    return forks_at_last_active_;
  }

 private:
  absl::Status Save();

  std::string path_;
  BootIdentity boot_;
  std::optional<absl::Time> last_active_at_;
  std::optional<uint64_t> forks_at_last_active_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_STATE_FGRAPH_MEMORY_H_
