// Exponential backoff with jitter for reconnecting to the server.
//
// Delay n (from 0) is min(max, initial * multiplier^n), scaled by a random
// factor in [1 - jitter, 1 + jitter] (then capped at max again), so a fleet of
// agents does not reconnect in lockstep after a server restart.
//
// Thread safety: not thread-safe; one owner.
#ifndef TRACEHEALTH_AGENT_UPLINK_BACKOFF_H_
#define TRACEHEALTH_AGENT_UPLINK_BACKOFF_H_

#include <functional>

#include "absl/time/time.h"

namespace tracehealth::agent {

struct BackoffOptions {
  absl::Duration initial = absl::Milliseconds(200);
  absl::Duration max = absl::Seconds(30);
  double multiplier = 2.0;
  double jitter = 0.2;  // in [0, 1)
};

class Backoff {
 public:
  // `random` returns uniform values in [0, 1); injectable for tests.
  Backoff(BackoffOptions options, std::function<double()> random);

  // The next delay; each call grows the base delay.
  absl::Duration Next();
  // Back to the initial delay (after a successful connection).
  void Reset() { attempt_base_ = options_.initial; }

 private:
  BackoffOptions options_;
  std::function<double()> random_;
  absl::Duration attempt_base_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_UPLINK_BACKOFF_H_
