// A short history of the host's thread count in the agent's memory, and
// its trend: the least-squares slope of threads over time.
//
// Samples come from every collection cycle and every fresh read of the
// gate; one closer than `min_spacing` to the previous is dropped (a burst
// of checks would otherwise fill the history with one moment), at most
// `max_samples` are kept, and a trend needs `min_samples` spanning at least
// `min_window` within the last `max_age`.
//
// Thread safety: thread-safe.
#ifndef TRACEHEALTH_AGENT_GATE_THREAD_HISTORY_H_
#define TRACEHEALTH_AGENT_GATE_THREAD_HISTORY_H_

#include <cstdint>
#include <deque>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/mitigation.pb.h"

namespace tracehealth::agent {

struct ThreadHistoryOptions {
  size_t max_samples = 64;
  absl::Duration min_spacing = absl::Seconds(5);
  size_t min_samples = 3;
  absl::Duration min_window = absl::Seconds(30);
  absl::Duration max_age = absl::Minutes(15);
};

class ThreadHistory {
 public:
  explicit ThreadHistory(ThreadHistoryOptions options = {})
      : options_(options) {}

  void Add(absl::Time at, uint64_t threads) ABSL_LOCKS_EXCLUDED(mu_);

  // The trend over the samples no older than max_age before `now`;
  // nullopt when too few or too close together.
  std::optional<v1::ThreadTrend> Trend(absl::Time now) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Sample {
    absl::Time at;
    uint64_t threads;
  };
  const ThreadHistoryOptions options_;
  mutable absl::Mutex mu_;
  std::deque<Sample> samples_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_GATE_THREAD_HISTORY_H_
