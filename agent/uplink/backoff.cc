#include "agent/uplink/backoff.h"

#include <algorithm>
#include <utility>

namespace tracehealth::agent {

Backoff::Backoff(BackoffOptions options, std::function<double()> random)
    : options_(options),
      random_(std::move(random)),
      attempt_base_(options.initial) {}

absl::Duration Backoff::Next() {
  const absl::Duration base = std::min(attempt_base_, options_.max);
  const double factor = 1.0 + options_.jitter * (2.0 * random_() - 1.0);
  const absl::Duration delay = std::min(base * factor, options_.max);
  attempt_base_ = std::min(base * options_.multiplier, options_.max);
  return delay;
}

}  // namespace tracehealth::agent
