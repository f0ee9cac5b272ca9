// ReportStore: the server's durable store of host reports.
//
// One of the two interfaces a storage backend implements (the other is
// AlertStore, alert_store.h); the embedded SQLite backend is
// server/storage/sqlite/, and server/storage/conformance/ holds the contract
// tests every backend passes. Rows carry the serialized HostReport as
// received plus the few columns queries and retention need.
//
// Thread safety: implementations are safe to call from several threads.
// WriteBatch calls may come from several threads but are applied one at a
// time; reads may run concurrently with them.
#ifndef TRACEHEALTH_SERVER_STORAGE_REPORT_STORE_H_
#define TRACEHEALTH_SERVER_STORAGE_REPORT_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
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
  // The serialized tracehealth.v1.StoredHostRecord of the report (what a
  // restart loads instead of the report: server/index/host_record_codec.h);
  // empty: none (stored as none), unless `whole` makes it.
  std::string record;
  // When set: what the store needs only for a row it stores whole (not as a
  // heartbeat), made then and only then, on the store's writer thread: it
  // sets `*record`, and `*blob` when `blob` is empty. Ingest defers the
  // record's encoding, and for a report rebuilt from a heartbeat form its
  // serialization, this way: such rows are mostly stored as heartbeats.
  // Stores read a row's parts through WholeOf.
  std::function<void(std::string* blob, std::string* record)> whole;
  // The report's material content (common/report/material.h), for the
  // store's heartbeat decision; digest 0: unknown (always stored whole).
  // The numbers are shared (material.h SharedNumbers; null: none).
  uint64_t material_digest = 0;
  std::shared_ptr<const std::vector<float>> material_numbers;
  // snapshot.threads.total, when the report has it.
  std::optional<uint64_t> threads;
  // On rows read back by ReadHostHistory: the report was stored as a
  // heartbeat; `blob` is then the full report it was folded into, and the
  // columns above (times, seq, threads, the three predictions) its own.
  bool heartbeat = false;
};

// The blob and record a store writes for `row` stored whole: its own, or
// those row.whole makes into `*blob_scratch` and `*record_scratch` (which
// must outlive the views).
struct WholeParts {
  const std::string* blob;
  const std::string* record;  // empty: none
};
inline WholeParts WholeOf(const ReportRow& row, std::string* blob_scratch,
                          std::string* record_scratch) {
  if (!row.whole) return {&row.blob, &row.record};
  blob_scratch->clear();
  record_scratch->clear();
  row.whole(blob_scratch, record_scratch);
  return {row.blob.empty() ? blob_scratch : &row.blob, record_scratch};
}

enum class WriteOutcome {
  kStored,     // a new (host_id, seq) row
  kDuplicate,  // (host_id, seq) was stored already; nothing written
};

// A host's newest stored report plus its bookkeeping, as loaded at start.
struct LatestRow {
  std::string host_id;
  int64_t first_seen_ns = 0;  // receive time of its first stored report
  int64_t last_seen_ns = 0;   // receive time of its last stored report
  uint64_t reports = 0;       // reports stored (retention does not lower it)
  uint64_t latest_seq = 0;    // the highest stored seq
  // The stored record of latest_seq (ReportRow::record); empty when it was
  // stored without one.
  std::string record;
  // The serialized HostReport of latest_seq: only when `record` is empty
  // (a reader that cannot use the record reads the report with GetReport).
  std::string blob;
};

// A host's reports over a time window (ReportStore::ReadHostHistory).
struct HistoryRows {
  int64_t matched = 0;  // rows in the window, before thinning
  std::vector<ReportRow> rows;
};

// The smallest, largest and last value of one column over an hour's
// reports; each absent when no report of the hour carries the column
// (`last` is the value of the hour's newest report carrying it).
template <typename T>
struct RollupRange {
  std::optional<T> min;
  std::optional<T> max;
  std::optional<T> last;
  bool operator==(const RollupRange& o) const {
    return min == o.min && max == o.max && last == o.last;
  }
};

// One host's reports (full reports and heartbeats) observed in one hour
// [hour_start_ns, hour_start_ns + 1 h), hours on the Unix epoch; the
// arithmetic is server/storage/rollup.h's.
struct RollupRow {
  std::string host_id;
  int64_t hour_start_ns = 0;
  int64_t reports = 0;     // full reports + heartbeats
  uint64_t first_seq = 0;  // of the oldest (observation time, then seq)
  uint64_t last_seq = 0;   // of the newest
  RollupRange<uint64_t> threads;
  RollupRange<double> attach_latency_seconds;  // kprobe_multi_return
  RollupRange<double> pool_budget_ratio;
  RollupRange<double> purge_seconds;
  // Predictions.worst_risk: the largest value, and the newest report's.
  int max_worst_risk = 0;
  int last_worst_risk = 0;

  bool operator==(const RollupRow& o) const {
    return host_id == o.host_id && hour_start_ns == o.hour_start_ns &&
           reports == o.reports && first_seq == o.first_seq &&
           last_seq == o.last_seq && threads == o.threads &&
           attach_latency_seconds == o.attach_latency_seconds &&
           pool_budget_ratio == o.pool_budget_ratio &&
           purge_seconds == o.purge_seconds &&
           max_worst_risk == o.max_worst_risk &&
           last_worst_risk == o.last_worst_risk;
  }
};

// What one ReportStore::RollUp call did.
struct RollupPass {
  int64_t hours = 0;  // hours folded (with or without reports)
  int64_t rows = 0;   // rollup rows written
  // Every hour before this is rolled up (the store's watermark after the
  // call); nullopt when the store has none yet (nothing stored).
  std::optional<int64_t> rolled_through_ns;
  // More complete hours remain (max_hours was reached).
  bool more = false;
};

class ReportStore {
 public:
  virtual ~ReportStore() = default;

  // Stores `rows` in ONE transaction (all or nothing). Returns one outcome
  // per row, in order. A row whose (host_id, seq) exists already, or
  // appears earlier in `rows`, is left untouched (kDuplicate). When this
  // returns OK every kStored row is committed; on an error nothing of the
  // batch is stored, and a later batch may store the same rows.
  virtual absl::StatusOr<std::vector<WriteOutcome>> WriteBatch(
      absl::Span<const ReportRow> rows) = 0;

  // Calls `fn` once per host with its newest (highest seq) report's record,
  // or the report itself when it was stored without one (`fn` may move from
  // the row). `fn` must not call back into the store.
  virtual absl::Status LoadLatest(
      const std::function<void(LatestRow&)>& fn) = 0;

  // Deletes reports received before `received_before_ns`, except each
  // host's newest one, in several short transactions (ingest goes on
  // between them). Rows are expected in receive order, as the writer stores
  // them. Returns the number of rows deleted.
  virtual absl::StatusOr<int64_t> DeleteReportsReceivedBefore(
      int64_t received_before_ns) = 0;

  // The cutoffs DeleteReportsReceivedBefore is cheapest at: multiples of
  // this since the Unix epoch (a backend partitioned by receive time drops
  // whole partitions there instead of deleting rows). Zero: every cutoff
  // costs the same.
  virtual absl::Duration retention_granularity() const {
    return absl::ZeroDuration();
  }

  // Reports stored for `host_id` (all hosts when empty).
  virtual absl::StatusOr<int64_t> CountReports(const std::string& host_id) = 0;

  // The stored report blob of (host_id, seq); NotFound when absent.
  virtual absl::StatusOr<std::string> GetReport(const std::string& host_id,
                                                uint64_t seq) = 0;

  // The reports of `host_id` observed in [from_ns, to_ns), ordered by
  // observation time, then seq. When more than `max_rows` (>= 1) match,
  // every k-th of them, k = ceil(matched / max_rows), from the first: at
  // most max_rows rows, the oldest always among them. An unknown host or an
  // empty window gives no rows (not an error). InvalidArgument when
  // max_rows is 0.
  virtual absl::StatusOr<HistoryRows> ReadHostHistory(
      const std::string& host_id, int64_t from_ns, int64_t to_ns,
      size_t max_rows) = 0;

  // Bytes the store occupies on disk.
  virtual absl::StatusOr<int64_t> SizeBytes() = 0;

  // --- Hourly rollups (RollupRow; kept longer than the reports) ---
  //
  // Folds, from what is stored (full reports and heartbeats), the hours
  // from the store's watermark on that end at or before `before_ns`, at
  // most `max_hours` (>= 1) of them, and writes one row per (host, hour)
  // with reports, together with the new watermark, in ONE transaction. The
  // watermark is stored (it survives a restart) and only moves forward: a
  // call rerun over rolled hours writes nothing, and a report observed in
  // an hour below the watermark (stored after its hour was rolled up) is
  // not folded: that hour's rollup stays as it was. Without a watermark
  // (a store's first pass) it starts at the hour of the oldest stored
  // observation; on a store without reports it is set to the hour of
  // `before_ns` (rounded down). Another store on the same database that
  // moved the watermark during the call makes it Aborted (nothing
  // written). InvalidArgument when max_hours < 1.
  virtual absl::StatusOr<RollupPass> RollUp(int64_t before_ns,
                                            int max_hours) = 0;

  // The rollups of `host_id` whose hour starts in [from_ns, to_ns), oldest
  // first. An unknown host or an empty window gives none.
  virtual absl::StatusOr<std::vector<RollupRow>> ReadHostRollups(
      const std::string& host_id, int64_t from_ns, int64_t to_ns) = 0;

  // Deletes the rollups whose hour starts before `hour_before_ns`; returns
  // how many. The watermark stays.
  virtual absl::StatusOr<int64_t> DeleteRollupsBefore(
      int64_t hour_before_ns) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_REPORT_STORE_H_
