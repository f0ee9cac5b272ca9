#include "server/alerts/retry_policy.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace tracehealth {

absl::Time RetryPolicy::Failed(absl::Time now,
                               std::optional<absl::Duration> retry_after) {
  next_ = next_ == absl::ZeroDuration() ? options_.initial
                                        : std::min(next_ * 2, options_.max);
  absl::Duration wait = retry_after.has_value()
                            ? std::clamp(*retry_after, absl::ZeroDuration(),
                                         options_.max_retry_after)
                            : next_;
  retry_at_ = now + wait;
  return retry_at_;
}

void RetryPolicy::Succeeded() {
  next_ = absl::ZeroDuration();
  retry_at_ = absl::InfinitePast();
}

std::optional<absl::Duration> ParseRetryAfter(absl::string_view value,
                                              absl::Time now) {
  value = absl::StripAsciiWhitespace(value);
  if (value.empty()) return std::nullopt;
  int64_t seconds;
  if (absl::SimpleAtoi(value, &seconds)) {
    if (seconds < 0) return std::nullopt;
    return absl::Seconds(seconds);
  }
  absl::Time at;
  std::string err;
  if (!absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(value),
                       absl::UTCTimeZone(), &at, &err)) {
    return std::nullopt;
  }
  return std::max(at - now, absl::ZeroDuration());
}

}  // namespace tracehealth
