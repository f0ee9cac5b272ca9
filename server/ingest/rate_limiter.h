// HostRateLimiter: a token bucket per host, so one host (a flooding or
// misbehaving agent) cannot monopolise the writer. Legitimate spool replays
// after an outage fit in the burst, or are spread out by the agent's retry.
//
// Thread safety: Allow is thread-safe.
#ifndef TRACEHEALTH_SERVER_INGEST_RATE_LIMITER_H_
#define TRACEHEALTH_SERVER_INGEST_RATE_LIMITER_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tracehealth::server {

class HostRateLimiter {
 public:
  // `per_second` <= 0: unlimited. `burst`: bucket size (at least 1).
  HostRateLimiter(double per_second, double burst);

  // Takes one token from `host`'s bucket; false when it is empty.
  bool Allow(absl::string_view host, absl::Time now);

  bool unlimited() const { return per_second_ <= 0; }
  double per_second() const { return per_second_; }
  double burst() const { return burst_; }

 private:
  struct Bucket {
    double tokens;
    absl::Time updated;
  };
  const double per_second_;
  const double burst_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_RATE_LIMITER_H_
