// When to post to Alertmanager again after a failed post: exponential
// backoff, or the server's Retry-After when it sent one.
//
// After the n-th failure in a row the next attempt waits
// min(initial * 2^(n-1), max): with the defaults 1, 2, 4, 8, 16, 32, 60,
// 60, ... s. A response's Retry-After replaces that wait (capped at
// max_retry_after); the doubling goes on underneath. A success starts over.
//
// Thread safety: none (the notifier's sender owns one).
#ifndef TRACEHEALTH_SERVER_ALERTS_RETRY_POLICY_H_
#define TRACEHEALTH_SERVER_ALERTS_RETRY_POLICY_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tracehealth {

class RetryPolicy {
 public:
  struct Options {
    absl::Duration initial = absl::Seconds(1);
    absl::Duration max = absl::Minutes(1);
    absl::Duration max_retry_after = absl::Minutes(5);
  };
  explicit RetryPolicy(Options options) : options_(options) {}

  // Records a failure at `now`; returns the earliest time to post again.
  absl::Time Failed(absl::Time now, std::optional<absl::Duration> retry_after);
  void Succeeded();
  // The earliest time to post (InfinitePast after a success).
  absl::Time retry_at() const { return retry_at_; }

 private:
  const Options options_;
  absl::Duration next_ = absl::ZeroDuration();
  absl::Time retry_at_ = absl::InfinitePast();
};

// An HTTP Retry-After value: delta-seconds ("120") or an HTTP-date
// ("Fri, 04 Dec 2026 17:00:00 GMT", as from `now`). nullopt when empty or
// unreadable; a date in the past is zero.
std::optional<absl::Duration> ParseRetryAfter(absl::string_view value,
                                              absl::Time now);

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_RETRY_POLICY_H_
