// A bounded history of stack depot readings (pools, persistent bytes), for
// the model's growth rate and time to exhaustion. Samples are kept at least
// `spacing` apart, at most `max_samples`, and persisted in the state
// directory ("depot_history", key=value, written atomically when a sample is
// added) so a restarted agent keeps its history. Samples from another boot
// are dropped: the depot starts empty at boot.
//
// Thread safety: not thread-safe; one owner.
#ifndef TRACEHEALTH_AGENT_STATE_DEPOT_HISTORY_H_
#define TRACEHEALTH_AGENT_STATE_DEPOT_HISTORY_H_

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/state/fgraph_memory.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

class DepotHistory {
 public:
  // `state_dir` "": kept in memory only.
  DepotHistory(std::string state_dir, size_t max_samples,
               absl::Duration spacing);

  // Loads persisted samples; a missing file is not an error, a corrupt one
  // is dropped and reported.
  absl::Status Load();

  // Records `current` (taken at `at`) and returns the samples to report,
  // oldest first, ending with `current`. Persisting errors go to
  // `*persist_error`.
  std::vector<v1::DepotSample> Observe(const BootIdentity& boot, absl::Time at,
                                       uint64_t pools,
                                       uint64_t persistent_bytes,
                                       absl::Status* persist_error);

 private:
  struct Sample {
    absl::Time at;
    uint64_t pools;
    uint64_t persistent_bytes;
  };
  absl::Status Save();

  std::string path_;
  size_t max_samples_;
  absl::Duration spacing_;
  BootIdentity boot_;
  std::deque<Sample> samples_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_STATE_DEPOT_HISTORY_H_
