// Housekeeper: periodic upkeep of the server's store: retention (delete
// reports older than the retention, keeping each host's newest) and the
// storage/host gauges.
//
// With a LeaseStore (several replicas on one database) retention runs only
// on the replica holding the "retention" lease, renewed every gauge
// interval; when that replica dies another takes over once the lease
// expires (lease_ttl). The cutoff is rounded down to the store's
// retention_granularity(), where deleting costs least.
//
// Thread safety: RunRetention and UpdateGauges may be called from any
// thread (the thread Start starts calls them too); Start (once) and Stop
// from the owner's.
#ifndef TRACEHEALTH_SERVER_HOUSEKEEPER_H_
#define TRACEHEALTH_SERVER_HOUSEKEEPER_H_

#include <functional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/index/host_index.h"
#include "server/metrics/server_metrics.h"
#include "server/storage/lease_store.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// "30d", "12h", "90m", "3600s" (a number and one unit: s, m, h, d).
// InvalidArgument otherwise, or when not positive.
absl::StatusOr<absl::Duration> ParseRetention(const std::string& text);

class Housekeeper {
 public:
  struct Options {
    absl::Duration retention = absl::Hours(24 * 30);
    absl::Duration gauge_interval = absl::Seconds(5);
    absl::Duration retention_interval = absl::Minutes(10);
    std::function<absl::Time()> now = [] { return absl::Now(); };
    // Not owned; null: this server alone runs retention.
    LeaseStore* leases = nullptr;
    std::string lease_holder;  // this replica's name in the lease
    absl::Duration lease_ttl = absl::Seconds(30);
  };
  // Not owned; must outlive the housekeeper. `metrics` may be null.
  Housekeeper(ReportStore* storage, const HostIndex* index,
              ServerMetrics* metrics, Options options);
  ~Housekeeper();  // Stop()

  // Deletes reports received before now - retention, rounded down to the
  // store's retention granularity (each host's newest stays). Returns rows
  // deleted.
  absl::StatusOr<int64_t> RunRetention();
  // Whether this replica may run retention now (takes or renews the lease;
  // always true without a LeaseStore).
  bool HoldsRetentionLease();
  void UpdateGauges();

  // Runs retention at start and every retention_interval, gauges every
  // gauge_interval, on a thread, until Stop.
  void Start();
  void Stop();

 private:
  ReportStore* const storage_;
  const HostIndex* const index_;
  ServerMetrics* const metrics_;
  const Options options_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_HOUSEKEEPER_H_
