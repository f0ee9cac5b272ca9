// Rollout plans (PredictAttachRequest.plan): every matched host sorted into
// safe / over budget / lockup risk / unknown from its attach prediction, and
// the waves a rollout takes: safe hosts first, then over-budget ones
// (outside peak), then lockup-risk ones after a mitigation; hosts of
// unknown risk are held back. See query.proto (PlanClass) for the classes.
//
// Thread safety: PlanBuilder is not thread-safe; Merge combines builders
// filled on several threads.
#ifndef TRACEHEALTH_SERVER_QUERY_ROLLOUT_PLAN_H_
#define TRACEHEALTH_SERVER_QUERY_ROLLOUT_PLAN_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {

// The plan's limit on listed host ids per wave.
inline constexpr uint32_t kMaxWaveHostIds = 100000;

// InvalidArgument naming the field: no or a non-positive max_latency,
// wave_host_ids over kMaxWaveHostIds.
absl::Status CheckPlanOptions(const v1::PlanOptions& plan);

// The class of a host whose attach prediction has `risk` and
// `latency_seconds`, for a plan allowing `max_latency_seconds`.
v1::PlanClass ClassifyForPlan(v1::Risk risk, double latency_seconds,
                              double max_latency_seconds);

class PlanBuilder {
 public:
  explicit PlanBuilder(const v1::PlanOptions& options);

  // Counts one host; returns its class.
  v1::PlanClass Add(const std::string& host_id, v1::Risk risk,
                    double latency_seconds);
  // Adds what `other` (same options) counted.
  void Merge(PlanBuilder&& other);

  v1::RolloutPlan Finish();

  double max_latency_seconds() const { return max_latency_; }

 private:
  struct Listed {
    double latency;
    std::string host_id;
    bool operator<(const Listed& o) const {
      return latency != o.latency ? latency < o.latency : host_id < o.host_id;
    }
  };
  struct Wave {
    uint32_t hosts = 0;
    double max_latency = 0;
    // A max-heap of the wave_host_ids least-latency hosts.
    std::vector<Listed> listed;
  };
  void List(Wave& w, double latency, const std::string& host_id);

  const v1::PlanOptions options_;
  const double max_latency_;
  // Indexed by PlanClass - 1.
  std::array<Wave, 4> waves_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_ROLLOUT_PLAN_H_
