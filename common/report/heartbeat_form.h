// The heartbeat form of a report (report.proto HeartbeatForm): what an agent
// sends instead of a report whose material content (material.h) equals that
// of an earlier report of its host, and what a server rebuilds from.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_REPORT_HEARTBEAT_FORM_H_
#define TRACEHEALTH_COMMON_REPORT_HEARTBEAT_FORM_H_

#include <cstdint>

#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth {

// `report` in heartbeat form on the earlier report `base_seq` (> 0): host_id,
// seq, observed_at, agent_version, model_version, interval_seconds,
// snapshot.threads.total, predictions.worst_risk, the kprobe_multi_return
// attach prediction's probe_kind and latency_seconds,
// predictions.stack_depot.budget_ratio (when set) and predictions.vmap_purge's
// applies and purge_seconds (each only when `report` has it), and
// heartbeat.base_seq. Nothing else.
v1::HostReport HeartbeatFormOf(const v1::HostReport& report, uint64_t base_seq);

// Whether `report` is in heartbeat form (heartbeat.base_seq > 0).
inline bool IsHeartbeatForm(const v1::HostReport& report) {
  return report.heartbeat().base_seq() > 0;
}

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_REPORT_HEARTBEAT_FORM_H_
