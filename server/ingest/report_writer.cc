#include "server/ingest/report_writer.h"

#include <utility>
#include <vector>

namespace tracehealth::server {

ReportWriter::ReportWriter(Storage* storage, Options options, CommitHook hook)
    : storage_(storage), options_(options), hook_(std::move(hook)) {
  thread_ = std::thread([this] { Run(); });
}

ReportWriter::~ReportWriter() { Stop(); }

bool ReportWriter::Submit(WriteRequest req) {
  absl::MutexLock lock(&mu_);
  auto has_room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || queue_.size() < options_.queue_capacity;
  };
  mu_.Await(absl::Condition(&has_room));
  if (stopping_) return false;
  queue_.push_back(std::move(req));
  return true;
}

bool ReportWriter::Enqueue(WriteRequest req, bool* full) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  queue_.push_back(std::move(req));
  *full = queue_.size() >= options_.queue_capacity;
  return true;
}

void ReportWriter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

size_t ReportWriter::queue_depth() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void ReportWriter::Run() {
  std::vector<WriteRequest> batch;
  std::vector<ReportRow> rows;
  std::vector<CommittedReport> committed;
  for (;;) {
    batch.clear();
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping and drained
      size_t n = std::min(queue_.size(), options_.max_batch);
      for (size_t i = 0; i < n; ++i) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    // Requests cancelled by an earlier failure of their stream are answered
    // without being written.
    size_t kept = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].cancelled != nullptr && batch[i].cancelled->load()) {
        if (batch[i].done) {
          batch[i].done(absl::AbortedError("an earlier report of this stream was not stored"));
        }
        continue;
      }
      if (kept != i) batch[kept] = std::move(batch[i]);
      ++kept;
    }
    batch.resize(kept);
    if (batch.empty()) continue;
    rows.clear();
    rows.reserve(batch.size());
    for (WriteRequest& r : batch) rows.push_back(std::move(r.row));
    absl::Time start = absl::Now();
    absl::StatusOr<std::vector<WriteOutcome>> outcomes = storage_->WriteBatch(rows);
    BatchStats stats;
    stats.reports = batch.size();
    stats.commit_time = absl::Now() - start;
    committed.clear();
    if (outcomes.ok()) {
      for (size_t i = 0; i < batch.size(); ++i) {
        if ((*outcomes)[i] == WriteOutcome::kStored) {
          stats.stored++;
          committed.push_back(
              {batch[i].report, absl::FromUnixNanos(rows[i].received_at_ns)});
        } else {
          stats.duplicates++;
        }
      }
    } else {
      stats.failed = true;
      stats.error = outcomes.status();
    }
    if (hook_) hook_(committed, stats);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!batch[i].done) continue;
      if (outcomes.ok()) {
        batch[i].done((*outcomes)[i]);
      } else {
        batch[i].done(outcomes.status());
      }
    }
  }
}

}  // namespace tracehealth::server
