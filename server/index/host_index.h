// HostIndex: the in-memory latest state of every host: a compact record of
// its newest report (host_record.h), first/last seen and its report count,
// for queries, metrics and alerting.
//
// Filled from ReportStore::LoadLatest at start and updated after each commit
// (Apply, on the report writer's publisher thread), so it only ever shows
// committed reports. The reports themselves stay in the store: whoever needs
// one (GetHost, explanations) reads it with ReportStore::GetReport(host,
// record.seq).
//
// Hosts are spread over kShards shards, each with its own lock, so a scan of
// the whole fleet (ForEach) holds up an update for one shard's worth of
// hosts at most, and shards can be scanned on several threads.
//
// Thread safety: all methods are thread-safe. ForEach and Visit call their
// function under a shard's reader lock: it must be quick and must not call
// back into the index.
#ifndef TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_
#define TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/calibration/class_calibrations.h"
#include "server/calibration/report_pricer.h"
#include "server/index/host_record.h"
#include "server/report/committed_report.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// What the index keeps per host, besides its id.
struct HostEntry {
  HostRecord record;
  absl::Time first_seen;
  absl::Time last_seen;
  uint64_t reports = 0;
};

class HostIndex {
 public:
  static constexpr int kShards = 16;
  // Bytes of a host's entry (with its id) a scan (ForEach, ForEachInShard)
  // prefetches a few hosts ahead: its id and what HostRecord puts first.
  static constexpr size_t kScanBytes = 256;

  // `classes` (not owned, may be null): hardware-class calibrations. The
  // record of a host without a calibration of its own in a class with
  // some is built from its report priced with the class's constants
  // (server/calibration/calibrated_report.h: one model run per report
  // applied), as of when the report arrived.
  explicit HostIndex(const ClassCalibrations* classes = nullptr)
      : classes_(classes) {}
  HostIndex(const HostIndex&) = delete;
  HostIndex& operator=(const HostIndex&) = delete;

  // How LoadFrom built the records.
  struct LoadStats {
    size_t from_records = 0;      // decoded from the stored record
    size_t from_reports = 0;      // rebuilt from the report (the next three)
    size_t without_record = 0;    // stored without one (before the store
                                  // kept records)
    size_t unusable_records = 0;  // of another format or model version, or
                                  // not decoding
    absl::Status first_unusable;  // why the first of those was refused
    // Of a host without its own calibration whose hardware class has
    // constants: rebuilt from the report, priced with them.
    size_t class_priced = 0;
  };

  // Loads every host's newest record from `storage` (replacing what the
  // index holds): the stored record where it is usable, else the record of
  // the stored report (its hardware class's calibration applied as in
  // Apply). Errors: the storage's, or DataLoss for a report that does not
  // parse or cannot be read (that host is skipped; the first such error is
  // returned after loading the rest). `stats` (optional) gets the counts.
  absl::Status LoadFrom(ReportStore& storage, LoadStats* stats = nullptr);

  // Applies a newly committed batch as the server priced it
  // (server/calibration/report_pricer.h): a host's record is replaced only
  // by a report with a higher seq; last_seen and the count always advance.
  // The record is the one stored with the report (CommittedReport::record)
  // unless the batch shows the report priced with its class's constants
  // or the stored one is not usable: then it is made from the report as
  // shown. No model runs here. A record is made only for each host's highest
  // seq in the batch.
  void Apply(const PricedBatch& batch);
  // The same for reports nobody has priced yet: priced here with the
  // index's classes (for tests and benchmarks; the server prices each
  // batch once for all its readers).
  void Apply(absl::Span<const CommittedReport> reports);

  // Takes a host's state as another replica stored it (ChangeFeed): its
  // latest report is replaced only by a higher seq; first/last seen and the
  // count move only outwards (max of both), so a repeated or older delivery
  // changes nothing. A blob that does not decode is skipped (DataLoss).
  absl::Status Merge(LatestRow& row);

  // A copy of the host's entry.
  std::optional<HostEntry> Get(const std::string& host_id) const;

  // Calls fn(entry) under the host's shard lock; false for an unknown host.
  bool Visit(const std::string& host_id,
             const std::function<void(const HostEntry&)>& fn) const;

  // Newest committed seq of `host_id`, 0 when unknown.
  uint64_t LatestSeq(const std::string& host_id) const;

  // Calls fn(host_id, entry) for every host, in no particular order, one
  // shard at a time under its reader lock.
  void ForEach(const std::function<void(const std::string&, const HostEntry&)>&
                   fn) const;
  // The same for one shard (0 <= shard < kShards).
  void ForEachInShard(int shard,
                      const std::function<void(const std::string&,
                                               const HostEntry&)>& fn) const;

  size_t size() const;

 private:
  struct Shard {
    mutable absl::Mutex mu;
    absl::node_hash_map<std::string, HostEntry> hosts ABSL_GUARDED_BY(mu);
  };
  // The record of a committed report: its stored record's when usable and
  // the report is not class-priced, else the record of `shown`.
  HostRecord CommittedRecord(const CommittedReport& c,
                             const v1::HostReport& shown, bool class_priced);
  // The record of a change-feed row: its stored record when usable and not
  // priced by the host's class, else its report's.
  absl::StatusOr<HostRecord> MergedRecord(const LatestRow& row);
  // Whether RecordOf would price the host of `record` with its class's
  // constants (a record decoded from the store is not priced).
  bool ClassWouldPrice(const HostRecord& record) const;
  // MakeHostRecord of `report`, with the class's calibration applied.
  HostRecord RecordOf(const v1::HostReport& report);
  const Shard& ShardOf(absl::string_view host_id) const;
  Shard& ShardOf(absl::string_view host_id);

  const ClassCalibrations* const classes_;
  std::array<Shard, kShards> shards_;
  FeatureTableCache tables_;
  KernelIdentityCache identities_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_
