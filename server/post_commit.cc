#include "server/post_commit.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace tracehealth::server {

PostCommit::PostCommit(Parts parts) : parts_(std::move(parts)) {}

void PostCommit::OnCommitted(absl::Span<const CommittedReport> stored,
                             const BatchStats& stats) {
  if (stats.failed) {
    parts_.metrics->CountCommitFailure();
    LogCommitFailure(stats);
    return;
  }
  // Before the index applies the batch: previous reports are the index's.
  const PricedBatch batch = parts_.pricer->Price(stored);
  parts_.alerting->OnCommitted(batch);
  parts_.recorder->Record(batch);
  parts_.index->Apply(batch);
  parts_.metrics->CountStored(static_cast<double>(stats.stored));
  parts_.metrics->CountDuplicates(static_cast<double>(stats.duplicates));
  parts_.metrics->ObserveCommit(absl::ToDoubleSeconds(stats.commit_time),
                                static_cast<double>(stats.reports));
}

void PostCommit::LogCommitFailure(const BatchStats& stats) {
  // The streams of the batch end UNAVAILABLE and their agents replay; the
  // log says why too, at most once a minute.
  const absl::Time now = parts_.now();
  int unlogged = 0;
  {
    absl::MutexLock lock(&failure_log_mu_);
    if (now - last_failure_logged_ < absl::Minutes(1)) {
      ++unlogged_failures_;
      return;
    }
    unlogged = unlogged_failures_;
    last_failure_logged_ = now;
    unlogged_failures_ = 0;
  }
  parts_.log(absl::StrFormat(
      "storing %zu reports failed: %s (%d more failures since the last "
      "message)",
      stats.reports, stats.error.ToString(), unlogged));
}

}  // namespace tracehealth::server
