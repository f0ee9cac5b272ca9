// HostIndex: the in-memory latest state of every host (its newest report,
// first/last seen, report count), for queries and per-host metrics.
//
// Filled from Storage::LoadLatest at start and updated by the ingest writer
// after each commit, so it only ever shows committed reports.
//
// Thread safety: all methods are thread-safe (readers share a lock; updates
// take it exclusively). Reports are immutable and shared, so a reader keeps
// a consistent copy after the lock is released.
#ifndef TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_
#define TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/index/label_selector.h"
#include "server/storage/storage.h"

namespace tracehealth::server {

struct HostEntry {
  std::string host_id;
  std::shared_ptr<const v1::HostReport> latest;  // never null
  absl::Time first_seen;
  absl::Time last_seen;
  uint64_t reports = 0;
};

// One committed report, as the writer hands it to the index.
struct CommittedReport {
  std::shared_ptr<const v1::HostReport> report;
  absl::Time received_at;
};

class HostIndex {
 public:
  HostIndex() = default;
  HostIndex(const HostIndex&) = delete;
  HostIndex& operator=(const HostIndex&) = delete;

  // Loads every host's newest report from `storage` (replacing what the
  // index holds). Errors: the storage's, or DataLoss for an unparsable blob
  // (that host is skipped; the first such error is returned after loading
  // the rest).
  absl::Status LoadFrom(Storage& storage);

  // Applies newly committed reports: a host's latest report is replaced only
  // by a higher seq; last_seen and the count always advance.
  void Apply(absl::Span<const CommittedReport> reports);

  std::optional<HostEntry> Get(const std::string& host_id) const;

  // Newest committed seq of `host_id`, 0 when unknown.
  uint64_t LatestSeq(const std::string& host_id) const;

  // Hosts matching `selector` (all when empty), in no particular order.
  std::vector<HostEntry> Select(const LabelSelector& selector) const;

  // Calls `fn` for every host under the reader lock; `fn` must not call
  // back into the index.
  void ForEach(const std::function<void(const HostEntry&)>& fn) const;

  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, HostEntry> hosts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_HOST_INDEX_H_
