// HeartbeatPolicy: whether a report may be stored as a heartbeat of its
// host's stored full report (heartbeat_chunk.h), one rule for every store.
//
// A report is folded when (1) the store has a full report of the host
// written by this process (after a restart the first report of each host is
// stored whole), (2) its seq is above every seq of the host stored since,
// (3) its material content (common/report/material.h) equals that full
// report's (digest equal and known, predictions' numbers within the
// tolerance), and (4) it was received less than `full_report_interval`
// after that full report. A zero interval folds nothing (every report is
// stored whole, as before heartbeats).
//
// Thread safety: none; a store calls it under its write lock. After a
// rolled-back transaction the store calls Reset (the next report of each
// host is stored whole).
#ifndef TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_POLICY_H_
#define TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "server/storage/heartbeat_chunk.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

class HeartbeatPolicy {
 public:
  // What a store keeps per host: its full report and its open chunk.
  struct Host {
    int64_t base_id = 0;  // the store's key of the full report
    uint64_t base_seq = 0;
    int64_t base_received_ns = 0;
    uint64_t digest = 0;
    std::shared_ptr<const std::vector<float>> numbers;  // material.h
    uint64_t last_seq = 0;  // the highest seq stored since
    int64_t chunk_id = 0;   // 0: no open chunk
    ChunkEncoder encoder;   // of the open chunk
  };

  explicit HeartbeatPolicy(absl::Duration full_report_interval)
      : interval_ns_(absl::ToInt64Nanoseconds(full_report_interval)) {}

  // The host's state when `row` may be folded into its full report; null
  // when it is to be stored whole.
  Host* Fold(const ReportRow& row);
  // `row` was stored whole with key `id`: it becomes the host's full report
  // (unless a higher seq of the host is stored already).
  void StoredFull(const ReportRow& row, int64_t id);
  // A heartbeat of `host` was stored.
  void StoredBeat(Host& host, uint64_t seq) {
    if (seq > host.last_seq) host.last_seq = seq;
  }
  void Reset() { hosts_.clear(); }
  bool enabled() const { return interval_ns_ > 0; }

 private:
  const int64_t interval_ns_;
  absl::flat_hash_map<std::string, Host> hosts_;
};

// What a heartbeat stores of `row`.
Beat BeatOf(const ReportRow& row);

// BeatOf's inverse: the report row a heartbeat of `host_id` stands for in
// history (its seq, times and moving numbers; heartbeat set).
ReportRow RowOfBeat(const std::string& host_id, const Beat& beat);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_POLICY_H_
