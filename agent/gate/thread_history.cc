#include "agent/gate/thread_history.h"

namespace tracehealth::agent {

void ThreadHistory::Add(absl::Time at, uint64_t threads) {
  absl::MutexLock lock(&mu_);
  if (!samples_.empty() && at - samples_.back().at < options_.min_spacing) {
    return;
  }
  samples_.push_back(Sample{at, threads});
  while (samples_.size() > options_.max_samples) samples_.pop_front();
}

std::optional<v1::ThreadTrend> ThreadHistory::Trend(absl::Time now) const {
  absl::MutexLock lock(&mu_);
  // Least squares over (t - t0, threads), t0 the oldest sample used.
  double n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  std::optional<absl::Time> first, last;
  uint64_t newest = 0;
  for (const Sample& s : samples_) {
    if (now - s.at > options_.max_age) continue;
    if (!first.has_value()) first = s.at;
    last = s.at;
    newest = s.threads;
    const double t = absl::ToDoubleSeconds(s.at - *first);
    const double y = static_cast<double>(s.threads);
    n += 1;
    st += t;
    sy += y;
    stt += t * t;
    sty += t * y;
  }
  if (n < static_cast<double>(options_.min_samples) ||
      *last - *first < options_.min_window) {
    return std::nullopt;
  }
  const double denom = n * stt - st * st;
  if (denom <= 0) return std::nullopt;
  v1::ThreadTrend trend;
  trend.set_threads_per_second((n * sty - st * sy) / denom);
  trend.set_window_seconds(absl::ToDoubleSeconds(*last - *first));
  trend.set_samples(static_cast<uint32_t>(n));
  trend.set_threads(newest);
  return trend;
}

}  // namespace tracehealth::agent
