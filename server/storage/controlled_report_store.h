// ControlledReportStore (tests only): a real ReportStore underneath whose
// WriteBatch a test can hold until released (to fill a writer's queue and
// observe backpressure) or make fail (as a full disk does), and whose
// retention granularity a test sets, and which records the order of its
// retention and rollup calls.
//
// Thread safety: set `fail_` and `hold_` before the store is used; the
// notifications and `held_rows_` may be used from any thread.
#ifndef TRACEHEALTH_SERVER_STORAGE_CONTROLLED_REPORT_STORE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONTROLLED_REPORT_STORE_H_

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

class ControlledReportStore : public ReportStore {
 public:
  // `inner` is not owned and must outlive this.
  explicit ControlledReportStore(ReportStore* inner) : inner_(inner) {}

  absl::StatusOr<std::vector<WriteOutcome>> WriteBatch(
      absl::Span<const ReportRow> rows) override {
    if (fail_) return absl::ResourceExhaustedError("database or disk is full");
    if (hold_ && !release_.HasBeenNotified()) {
      held_rows_ += rows.size();
      if (!entered_.HasBeenNotified()) entered_.Notify();
      release_.WaitForNotification();
    }
    return inner_->WriteBatch(rows);
  }
  absl::Status LoadLatest(const std::function<void(LatestRow&)>& fn) override {
    return inner_->LoadLatest(fn);
  }
  absl::StatusOr<int64_t> DeleteReportsReceivedBefore(int64_t t) override {
    calls_.push_back("DeleteReportsReceivedBefore");
    raw_cutoffs_.push_back(t);
    return inner_->DeleteReportsReceivedBefore(t);
  }
  absl::StatusOr<int64_t> CountReports(const std::string& h) override {
    return inner_->CountReports(h);
  }
  absl::StatusOr<std::string> GetReport(const std::string& h,
                                        uint64_t s) override {
    return inner_->GetReport(h, s);
  }
  absl::StatusOr<HistoryRows> ReadHostHistory(const std::string& h,
                                              int64_t from, int64_t to,
                                              size_t max_rows) override {
    return inner_->ReadHostHistory(h, from, to, max_rows);
  }
  absl::StatusOr<int64_t> SizeBytes() override { return inner_->SizeBytes(); }
  absl::StatusOr<RollupPass> RollUp(int64_t before_ns, int max_hours) override {
    calls_.push_back("RollUp");
    if (fail_rollup_) return absl::UnavailableError("rollup failed");
    return inner_->RollUp(before_ns, max_hours);
  }
  absl::StatusOr<std::vector<RollupRow>> ReadHostRollups(const std::string& h,
                                                         int64_t from,
                                                         int64_t to) override {
    return inner_->ReadHostRollups(h, from, to);
  }
  absl::StatusOr<int64_t> DeleteRollupsBefore(int64_t t) override {
    calls_.push_back("DeleteRollupsBefore");
    return inner_->DeleteRollupsBefore(t);
  }
  absl::Duration retention_granularity() const override { return granularity_; }

  bool fail_ = false;           // every WriteBatch fails
  bool hold_ = false;           // WriteBatch waits for release_
  bool fail_rollup_ = false;    // every RollUp fails (Unavailable)
  absl::Notification entered_;  // a WriteBatch is being held
  absl::Notification release_;
  std::atomic<size_t> held_rows_{0};  // rows in batches that were held
  // What retention_granularity() says (the inner store's is not asked).
  absl::Duration granularity_ = absl::ZeroDuration();
  // The retention and rollup calls, in order (one caller thread), and the
  // cutoffs DeleteReportsReceivedBefore was given.
  std::vector<std::string> calls_;
  std::vector<int64_t> raw_cutoffs_;

 private:
  ReportStore* const inner_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONTROLLED_REPORT_STORE_H_
