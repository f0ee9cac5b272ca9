// Housekeeper: periodic upkeep of the server's store: hourly rollups,
// retention (delete reports older than the retention, keeping each host's
// newest; delete rollups older than theirs) and the storage/host gauges.
//
// One retention run, in this order:
// 1. rollups (RunRollups): ReportStore::RollUp of every hour that ended at
//    least rollup_delay ago (reports still in flight get that long), in
//    calls of rollup_max_hours, until none is left;
// 2. reports: those received before now - retention, and never at or after
//    the rollup watermark - observation_lead, so a report whose hour is not
//    rolled up yet is never deleted (a report is observed at most
//    observation_lead after its receipt: ValidateReport's max_clock_skew);
//    skipped when step 1 failed;
// 3. rollups whose hour starts before now - rollup_retention.
//
// With a LeaseStore (several replicas on one database) the run happens
// only on the replica holding the "retention" lease (the rollups too: the
// same replica does step 1 before step 2), renewed every gauge interval;
// when that replica dies another takes over once the lease expires
// (lease_ttl). RollUp itself writes an hour once even when two replicas
// run it (its watermark check). The report cutoff is rounded down to the
// store's retention_granularity(), where deleting costs least.
//
// Thread safety: RunRetention and UpdateGauges may be called from any
// thread (the thread Start starts calls them too); Start (once) and Stop
// from the owner's.
#ifndef TRACEHEALTH_SERVER_HOUSEKEEPER_H_
#define TRACEHEALTH_SERVER_HOUSEKEEPER_H_

#include <cstdint>
#include <functional>
#include <optional>
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
    absl::Duration rollup_retention = absl::Hours(24 * 400);
    absl::Duration rollup_delay = absl::Minutes(15);
    int rollup_max_hours = 24;
    absl::Duration observation_lead = absl::Hours(1);
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

  struct RetentionRun {
    int64_t rollup_hours = 0;     // hours rolled up
    int64_t rollup_rows = 0;      // rollup rows written
    int64_t reports_deleted = 0;  // full reports and heartbeats
    int64_t rollups_deleted = 0;
    // The store's rollup watermark after step 1 (RollupPass).
    std::optional<int64_t> rolled_through_ns;
  };
  // Steps 1-3 above. Reports: received before min(now - retention,
  // watermark - observation_lead), rounded down to the store's retention
  // granularity (each host's newest stays). An error of step 1 or 2 is
  // returned before the next step runs.
  absl::StatusOr<RetentionRun> RunRetention();
  // Step 1 alone; returns (hours, rows) in a RetentionRun.
  absl::StatusOr<RetentionRun> RunRollups();
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
