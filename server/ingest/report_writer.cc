#include "server/ingest/report_writer.h"

#include <pthread.h>

#include <utility>
#include <vector>

#include "server/report/stored_report.h"

namespace tracehealth::server {

ReportWriter::ReportWriter(ReportStore* storage, Options options,
                           CommitHook hook)
    : storage_(storage), options_(options), hook_(std::move(hook)) {
  // Named for top -H, perf and the ingest benchmark's CPU breakdown.
  publisher_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ingest-publish");
    RunPublisher();
  });
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ingest-writer");
    Run();
  });
}

ReportWriter::~ReportWriter() { Stop(); }

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
  if (thread_.joinable()) thread_.join();  // Run tells the publisher it is done
  if (publisher_.joinable()) publisher_.join();
}

size_t ReportWriter::queue_depth() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void ReportWriter::Run() {
  std::vector<WriteRequest> batch;
  for (;;) {
    batch.clear();
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) break;  // stopping and drained
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
          batch[i].done(absl::AbortedError(
              "an earlier report of this stream was not stored"));
        }
        continue;
      }
      if (kept != i) batch[kept] = std::move(batch[i]);
      ++kept;
    }
    batch.resize(kept);
    if (batch.empty()) continue;
    Committed c;
    c.rows.reserve(batch.size());
    for (WriteRequest& r : batch) c.rows.push_back(std::move(r.row));
    absl::Time start = absl::Now();
    c.outcomes = storage_->WriteBatch(c.rows);
    c.commit_time = absl::Now() - start;
    c.batch = std::move(batch);
    batch = std::vector<WriteRequest>();
    const bool failed = !c.outcomes.ok();
    absl::MutexLock lock(&pub_mu_);
    auto has_room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pub_mu_) {
      return unpublished_.size() < kMaxUnpublished;
    };
    pub_mu_.Await(absl::Condition(&has_room));
    unpublished_.push_back(std::move(c));
    if (failed) {
      // Let the streams hear about it before the next batch is formed.
      auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pub_mu_) {
        return unpublished_.empty() && !publishing_;
      };
      pub_mu_.Await(absl::Condition(&drained));
    }
  }
  absl::MutexLock lock(&pub_mu_);
  writer_done_ = true;
}

void ReportWriter::RunPublisher() {
  for (;;) {
    Committed c;
    {
      absl::MutexLock lock(&pub_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pub_mu_) {
        return writer_done_ || !unpublished_.empty();
      };
      pub_mu_.Await(absl::Condition(&ready));
      if (unpublished_.empty())
        return;  // the writer is done and all is published
      c = std::move(unpublished_.front());
      unpublished_.pop_front();
      publishing_ = true;
    }
    Publish(c);
    {
      absl::MutexLock lock(&pub_mu_);
      publishing_ = false;
    }
    // `c` (reports, blobs) is freed here, off the writer thread.
  }
}

void ReportWriter::Publish(Committed& c) {
  BatchStats stats;
  stats.reports = c.batch.size();
  stats.commit_time = c.commit_time;
  std::vector<CommittedReport> committed;
  if (c.outcomes.ok()) {
    committed.reserve(c.batch.size());
    for (size_t i = 0; i < c.batch.size(); ++i) {
      if ((*c.outcomes)[i] == WriteOutcome::kStored) {
        stats.stored++;
        ReportRow& row = c.rows[i];
        std::shared_ptr<const v1::HostReport>& parsed = c.batch[i].parsed;
        committed.push_back(
            {parsed != nullptr
                 ? std::make_shared<StoredReport>(std::move(row.host_id),
                                                  row.seq, std::move(parsed))
                 : std::make_shared<StoredReport>(std::move(row.host_id),
                                                  row.seq, std::move(row.blob)),
             absl::FromUnixNanos(row.received_at_ns), std::move(row.record)});
      } else {
        stats.duplicates++;
      }
    }
  } else {
    stats.failed = true;
    stats.error = c.outcomes.status();
  }
  if (hook_) hook_(committed, stats);
  for (size_t i = 0; i < c.batch.size(); ++i) {
    if (!c.batch[i].done) continue;
    if (c.outcomes.ok()) {
      c.batch[i].done((*c.outcomes)[i]);
    } else {
      c.batch[i].done(c.outcomes.status());
    }
  }
}

}  // namespace tracehealth::server
