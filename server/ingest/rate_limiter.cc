#include "server/ingest/rate_limiter.h"

#include <algorithm>

namespace tracehealth::server {

HostRateLimiter::HostRateLimiter(double per_second, double burst)
    : per_second_(per_second), burst_(std::max(1.0, burst)) {}

bool HostRateLimiter::Allow(absl::string_view host, absl::Time now) {
  if (per_second_ <= 0) return true;
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = buckets_.try_emplace(host, Bucket{burst_, now});
  Bucket& b = it->second;
  if (!inserted && now > b.updated) {
    b.tokens =
        std::min(burst_, b.tokens + absl::ToDoubleSeconds(now - b.updated) *
                                        per_second_);
    b.updated = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

}  // namespace tracehealth::server
