// Storage: the server's durable store of host reports and alerts.
//
// A small interface so that a second backend (PostgreSQL, for several server
// replicas) can follow the embedded SQLite one. Rows carry the serialized
// HostReport as received plus the few columns queries and retention need.
//
// Thread safety: implementations are safe to call from several threads.
// WriteBatch calls are serialized; reads may run concurrently with them.
#ifndef TRACEHEALTH_SERVER_STORAGE_STORAGE_H_
#define TRACEHEALTH_SERVER_STORAGE_STORAGE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tracehealth::server {

// One report as stored. Times are Unix nanoseconds.
struct ReportRow {
  std::string host_id;
  uint64_t seq = 0;
  int64_t observed_at_ns = 0;
  int64_t received_at_ns = 0;
  // Predictions.worst_risk (a tracehealth.v1.Risk value).
  int worst_risk = 0;
  // Key prediction columns; unset when the report does not carry them.
  std::optional<double> attach_latency_seconds;  // kprobe_multi_return
  std::optional<double> pool_budget_ratio;
  std::optional<double> purge_seconds;
  // The serialized tracehealth.v1.HostReport.
  std::string blob;
};

enum class WriteOutcome {
  kStored,     // a new (host_id, seq) row
  kDuplicate,  // (host_id, seq) was stored already; nothing written
};

// A host's newest stored report plus its bookkeeping, as loaded at start.
struct LatestRow {
  std::string host_id;
  int64_t first_seen_ns = 0;
  int64_t last_seen_ns = 0;
  uint64_t reports = 0;
  uint64_t latest_seq = 0;
  std::string blob;  // serialized HostReport of latest_seq
};

// One alert (the alert engine writes them; queries list them).
struct AlertRow {
  std::string rule;
  std::string host_id;
  int state = 0;  // tracehealth.v1.AlertState
  std::string severity;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  double value = 0;
  int64_t active_since_ns = 0;
  std::optional<int64_t> fired_at_ns;
  std::optional<int64_t> resolved_at_ns;
};

struct AlertFilter {
  // Empty: pending and firing.
  std::vector<int> states;
  std::string host_id;  // empty: every host
  uint32_t limit = 1000;
};

class Storage {
 public:
  virtual ~Storage() = default;

  // Stores `rows` in ONE transaction (all or nothing). Returns one outcome
  // per row, in order. A row whose (host_id, seq) exists already is left
  // untouched (kDuplicate). When this returns OK every kStored row is
  // committed.
  virtual absl::StatusOr<std::vector<WriteOutcome>> WriteBatch(
      absl::Span<const ReportRow> rows) = 0;

  // Calls `fn` once per host with its newest report (`fn` may move from
  // the row).
  virtual absl::Status LoadLatest(
      const std::function<void(LatestRow&)>& fn) = 0;

  // Deletes reports received before `received_before_ns`, except each
  // host's newest one, in several short transactions (ingest goes on
  // between them). Returns the number of rows deleted.
  virtual absl::StatusOr<int64_t> DeleteReportsReceivedBefore(
      int64_t received_before_ns) = 0;

  // Reports stored for `host_id` (all hosts when empty).
  virtual absl::StatusOr<int64_t> CountReports(const std::string& host_id) = 0;

  // The stored report blob of (host_id, seq); NotFound when absent.
  virtual absl::StatusOr<std::string> GetReport(const std::string& host_id,
                                                uint64_t seq) = 0;

  // Inserts or replaces the alert keyed by (rule, host_id, active_since).
  virtual absl::Status PutAlert(const AlertRow& alert) = 0;
  virtual absl::StatusOr<std::vector<AlertRow>> ListAlerts(
      const AlertFilter& filter) = 0;

  // Bytes the store occupies on disk (database + write-ahead log).
  virtual absl::StatusOr<int64_t> SizeBytes() = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_STORAGE_H_
