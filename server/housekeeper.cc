#include "server/housekeeper.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tracehealth::server {

absl::StatusOr<absl::Duration> ParseRetention(const std::string& text) {
  if (text.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad retention \"", text, "\""));
  }
  char unit = text.back();
  int64_t n = 0;
  if (!absl::SimpleAtoi(text.substr(0, text.size() - 1), &n) || n <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad retention \"", text, "\": want e.g. 30d, 12h, 90m"));
  }
  switch (unit) {
    case 's':
      return absl::Seconds(n);
    case 'm':
      return absl::Minutes(n);
    case 'h':
      return absl::Hours(n);
    case 'd':
      return absl::Hours(24 * n);
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "bad retention unit in \"", text, "\": use s, m, h or d"));
  }
}

Housekeeper::Housekeeper(ReportStore* storage, const HostIndex* index,
                         ServerMetrics* metrics, Options options)
    : storage_(storage),
      index_(index),
      metrics_(metrics),
      options_(std::move(options)) {}

Housekeeper::~Housekeeper() { Stop(); }

absl::StatusOr<Housekeeper::RetentionRun> Housekeeper::RunRollups() {
  RetentionRun run;
  const int64_t before =
      absl::ToUnixNanos(options_.now() - options_.rollup_delay);
  for (;;) {
    absl::StatusOr<RollupPass> pass =
        storage_->RollUp(before, options_.rollup_max_hours);
    if (!pass.ok()) return pass.status();
    run.rollup_hours += pass->hours;
    run.rollup_rows += pass->rows;
    run.rolled_through_ns = pass->rolled_through_ns;
    if (!pass->more) return run;
  }
}

absl::StatusOr<Housekeeper::RetentionRun> Housekeeper::RunRetention() {
  absl::StatusOr<RetentionRun> run = RunRollups();
  if (!run.ok()) return run.status();
  const absl::Time now = options_.now();
  int64_t cutoff = absl::ToUnixNanos(now - options_.retention);
  if (run->rolled_through_ns.has_value()) {
    cutoff = std::min(cutoff,
                      *run->rolled_through_ns -
                          absl::ToInt64Nanoseconds(options_.observation_lead));
  }
  const int64_t step =
      absl::ToInt64Nanoseconds(storage_->retention_granularity());
  if (step > 0) cutoff -= ((cutoff % step) + step) % step;
  absl::StatusOr<int64_t> reports =
      storage_->DeleteReportsReceivedBefore(cutoff);
  if (!reports.ok()) return reports.status();
  run->reports_deleted = *reports;
  absl::StatusOr<int64_t> rollups = storage_->DeleteRollupsBefore(
      absl::ToUnixNanos(now - options_.rollup_retention));
  if (!rollups.ok()) return rollups.status();
  run->rollups_deleted = *rollups;
  return run;
}

bool Housekeeper::HoldsRetentionLease() {
  if (options_.leases == nullptr) return true;
  absl::StatusOr<bool> held = options_.leases->AcquireLease(
      "retention", options_.lease_holder, options_.lease_ttl);
  return held.ok() && *held;
}

void Housekeeper::UpdateGauges() {
  if (metrics_ == nullptr) return;
  absl::StatusOr<int64_t> bytes = storage_->SizeBytes();
  if (bytes.ok()) metrics_->SetStorageBytes(static_cast<double>(*bytes));
  metrics_->SetHosts(static_cast<double>(index_->size()));
}

void Housekeeper::Start() {
  thread_ = std::thread([this] {
    absl::Time next_retention = absl::InfinitePast();
    do {
      UpdateGauges();
      const bool leader = HoldsRetentionLease();
      if (leader && absl::Now() >= next_retention) {
        absl::StatusOr<RetentionRun> n = RunRetention();
        if (!n.ok()) {
          std::fprintf(stderr, "retention: %s\n",
                       n.status().ToString().c_str());
        } else if (n->rollup_rows + n->reports_deleted + n->rollups_deleted >
                   0) {
          std::fprintf(stderr,
                       "retention: rolled up %lld hours (%lld rows), deleted "
                       "%lld reports and %lld rollups\n",
                       static_cast<long long>(n->rollup_hours),
                       static_cast<long long>(n->rollup_rows),
                       static_cast<long long>(n->reports_deleted),
                       static_cast<long long>(n->rollups_deleted));
        }
        next_retention = absl::Now() + options_.retention_interval;
      }
    } while (!stop_.WaitForNotificationWithTimeout(options_.gauge_interval));
  });
}

void Housekeeper::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) {
    thread_.join();
    // Another replica need not wait for the lease to expire.
    if (options_.leases != nullptr) {
      (void)options_.leases->ReleaseLease("retention", options_.lease_holder);
    }
  }
}

}  // namespace tracehealth::server
