#include "server/storage/heartbeat_policy.h"

#include "common/report/material.h"

namespace tracehealth::server {

HeartbeatPolicy::Host* HeartbeatPolicy::Fold(const ReportRow& row) {
  if (interval_ns_ <= 0 || row.material_digest == 0) return nullptr;
  auto it = hosts_.find(row.host_id);
  if (it == hosts_.end()) return nullptr;
  Host& h = it->second;
  if (row.seq <= h.last_seq) return nullptr;
  if (row.received_at_ns - h.base_received_ns >= interval_ns_) return nullptr;
  if (!SameMaterial(row.material_digest, row.material_numbers, h.digest,
                    h.numbers)) {
    return nullptr;
  }
  return &h;
}

void HeartbeatPolicy::StoredFull(const ReportRow& row, int64_t id) {
  if (interval_ns_ <= 0) return;
  Host& h = hosts_[row.host_id];
  if (h.last_seq != 0 && row.seq <= h.last_seq) return;  // an older seq
  h.base_id = id;
  h.base_seq = row.seq;
  h.base_received_ns = row.received_at_ns;
  h.digest = row.material_digest;
  h.numbers = row.material_numbers;
  h.last_seq = row.seq;
  h.chunk_id = 0;
}

Beat BeatOf(const ReportRow& row) {
  Beat b;
  b.seq = row.seq;
  b.observed_at_ns = row.observed_at_ns;
  b.received_at_ns = row.received_at_ns;
  b.threads = row.threads;
  b.attach_latency_seconds = row.attach_latency_seconds;
  b.pool_budget_ratio = row.pool_budget_ratio;
  b.purge_seconds = row.purge_seconds;
  return b;
}

ReportRow RowOfBeat(const std::string& host_id, const Beat& beat) {
  ReportRow r;
  r.host_id = host_id;
  r.seq = beat.seq;
  r.observed_at_ns = beat.observed_at_ns;
  r.received_at_ns = beat.received_at_ns;
  r.threads = beat.threads;
  r.attach_latency_seconds = beat.attach_latency_seconds;
  r.pool_budget_ratio = beat.pool_budget_ratio;
  r.purge_seconds = beat.purge_seconds;
  r.heartbeat = true;
  return r;
}

}  // namespace tracehealth::server
