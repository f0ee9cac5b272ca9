// HostIndex: the in-memory latest state of every host (its newest report,
// first/last seen, report count), for queries and per-host metrics.
//
// Filled from ReportStore::LoadLatest at start and updated after each commit
// (Apply, on the report writer's publisher thread), so it only ever shows
// committed reports. Reports are
// held as StoredReports: a host's newest report is parsed when it is first
// read (Get, Select, ForEach), never on the ingest path.
//
// Thread safety: all methods are thread-safe (readers share a lock; updates
// take it exclusively; parsing happens outside it). Reports are immutable
// and shared, so a reader keeps a consistent copy after the lock is
// released.
#ifndef TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_
#define TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/calibration/class_calibrations.h"
#include "server/index/label_selector.h"
#include "server/report/committed_report.h"
#include "server/report/stored_report.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

struct HostEntry {
  std::string host_id;
  std::shared_ptr<const v1::HostReport> latest;  // never null
  absl::Time first_seen;
  absl::Time last_seen;
  uint64_t reports = 0;
};

class HostIndex {
 public:
  // `classes` (not owned, may be null): hardware-class calibrations; a
  // host without a calibration of its own in a class with some is shown
  // with its class's constants (server/calibration/calibrated_report.h:
  // its predictions recomputed when read, which costs one model run per
  // host read).
  explicit HostIndex(const ClassCalibrations* classes = nullptr)
      : classes_(classes) {}
  HostIndex(const HostIndex&) = delete;
  HostIndex& operator=(const HostIndex&) = delete;

  // Loads every host's newest report from `storage` (replacing what the
  // index holds). Each blob is checked with CheckReportWire, not parsed.
  // Errors: the storage's, or DataLoss for a blob that does not decode
  // (that host is skipped; the first such error is returned after loading
  // the rest).
  absl::Status LoadFrom(ReportStore& storage);

  // Applies newly committed reports: a host's latest report is replaced only
  // by a higher seq; last_seen and the count always advance.
  void Apply(absl::Span<const CommittedReport> reports);

  // Takes a host's state as another replica stored it (ChangeFeed): its
  // latest report is replaced only by a higher seq; first/last seen and the
  // count move only outwards (max of both), so a repeated or older delivery
  // changes nothing. A blob that does not decode is skipped (DataLoss).
  absl::Status Merge(LatestRow& row);

  std::optional<HostEntry> Get(const std::string& host_id) const;

  // Newest committed seq of `host_id`, 0 when unknown.
  uint64_t LatestSeq(const std::string& host_id) const;

  // Hosts matching `selector` (all when empty), in no particular order.
  std::vector<HostEntry> Select(const LabelSelector& selector) const;

  // Calls `fn` for every host, on a copy taken under the reader lock (so
  // `fn` runs without it and may call back into the index).
  void ForEach(const std::function<void(const HostEntry&)>& fn) const;

  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const StoredReport> latest;  // never null
    absl::Time first_seen;
    absl::Time last_seen;
    uint64_t reports = 0;
  };
  // Parses the entry's report if no one has yet, with the class's
  // calibration applied.
  HostEntry ToHostEntry(const std::string& host_id, const Entry& e) const;
  // Every host, copied under the reader lock.
  std::vector<std::pair<std::string, Entry>> Copy() const;

  const ClassCalibrations* const classes_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> hosts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_
