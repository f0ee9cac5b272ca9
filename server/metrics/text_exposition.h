// The Prometheus text exposition of the server's metrics, as /metrics
// serves it: every collectable's families, collected now, in the order
// given, written by prometheus-cpp's TextSerializer (format 0.0.4; label
// values escaped: backslash, double quote and newline).
//
// Thread safety: as thread-safe as the collectables' Collect (they are).
#ifndef TRACEHEALTH_SERVER_METRICS_TEXT_EXPOSITION_H_
#define TRACEHEALTH_SERVER_METRICS_TEXT_EXPOSITION_H_

#include <memory>
#include <string>
#include <vector>

#include "prometheus/collectable.h"

namespace tracehealth::server {

// The Content-Type of the exposition.
inline constexpr char kMetricsContentType[] =
    "text/plain; version=0.0.4; charset=utf-8";

std::string SerializeMetrics(
    const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_METRICS_TEXT_EXPOSITION_H_
