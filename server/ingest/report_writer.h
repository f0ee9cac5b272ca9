// ReportWriter: the single writer thread between ingest streams and the
// ReportStore.
//
// Streams Enqueue validated reports; the writer thread ("ingest-writer")
// takes everything queued (up to max_batch) and stores it in ONE transaction
// (group commit). A second thread, the publisher ("ingest-publish"), then
// calls the commit hook (what follows a commit: the server's alerting, index
// and metrics) and each request's `done` callback, in that order, batch by
// batch in commit order, and frees the batch, while the writer already
// commits the next one. `done` is what lets a stream ack: it is called only
// after the row is committed (or with the error that prevented it). After a
// failed commit the writer waits until its callbacks have run before it
// forms the next batch, so a stream can cancel its later requests
// (`cancelled`).
//
// Backpressure: Enqueue never blocks (its callers are gRPC callback
// threads, which must not); it tells the caller when the queue is full, and
// the caller stops producing until one of its own requests completes, so
// memory stays bounded when storage is slower than the streams.
//
// Thread safety: Enqueue and queue_depth may be called from any number of
// threads; Stop from one (the owner's, never from a callback). The commit
// hook runs on the publisher thread, one batch at a time. `done` runs on the
// publisher thread too, after its batch's hook, except for a cancelled
// request: its `done` (Aborted) runs on the writer thread when its batch is
// formed.
#ifndef TRACEHEALTH_SERVER_INGEST_REPORT_WRITER_H_
#define TRACEHEALTH_SERVER_INGEST_REPORT_WRITER_H_

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/report/committed_report.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

struct WriteRequest {
  // Handed to the commit hook as a StoredReport (the blob moves into it,
  // or `parsed` when set) once stored.
  ReportRow row;
  // Optional: the parsed report of row.blob (MakeReportRow's), so that the
  // commit hook does not parse it again.
  std::shared_ptr<const v1::HostReport> parsed;
  // Called once: on the publisher thread after its batch's commit (with the
  // outcome) or failed commit (with the error), after the commit hook; or,
  // for a cancelled request, on the writer thread with Aborted.
  std::function<void(absl::StatusOr<WriteOutcome>)> done;
  // Optional: when set to true (e.g. by an earlier request's `done` after a
  // failed commit), the request is not written when its batch is formed;
  // `done` gets Aborted. Lets a stream keep its stored seqs contiguous.
  std::shared_ptr<const std::atomic<bool>> cancelled;
};

struct BatchStats {
  size_t reports = 0;
  size_t stored = 0;
  size_t duplicates = 0;
  absl::Duration commit_time;
  bool failed = false;
  absl::Status error;  // why, when failed
};

class ReportWriter {
 public:
  struct Options {
    size_t queue_capacity = 16384;
    size_t max_batch = 8192;
  };
  // Called on the publisher thread after each batch's commit, in commit
  // order: with the newly stored reports when the commit succeeded; with
  // none, stats.failed and stats.error when it failed.
  using CommitHook =
      std::function<void(absl::Span<const CommittedReport>, const BatchStats&)>;

  // `storage` is not owned and must outlive the writer. Starts the thread.
  ReportWriter(ReportStore* storage, Options options, CommitHook hook);
  ~ReportWriter();  // Stop()
  ReportWriter(const ReportWriter&) = delete;
  ReportWriter& operator=(const ReportWriter&) = delete;

  // Queues `req` without blocking. Returns false (without calling `done`)
  // after Stop. Sets `*full` when queue_capacity or more requests are queued
  // now: the caller should then produce nothing more until a request of its
  // own completes, which bounds the queue to queue_capacity plus one request
  // per producer.
  bool Enqueue(WriteRequest req, bool* full);

  // Stops accepting, commits everything queued, publishes it (the hook and
  // `done` callbacks run on the writer's threads meanwhile), joins both
  // threads. Idempotent.
  void Stop();

  size_t queue_depth() const;

 private:
  // One committed (or failed) batch on its way to the publisher.
  struct Committed {
    std::vector<WriteRequest> batch;
    std::vector<ReportRow> rows;
    absl::StatusOr<std::vector<WriteOutcome>> outcomes;
    absl::Duration commit_time;
  };
  // Batches the writer may run ahead of the publisher.
  static constexpr size_t kMaxUnpublished = 2;

  void Run();
  void RunPublisher();
  void Publish(Committed& c);

  ReportStore* const storage_;
  const Options options_;
  const CommitHook hook_;
  mutable absl::Mutex mu_;
  std::deque<WriteRequest> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex pub_mu_;
  std::deque<Committed> unpublished_ ABSL_GUARDED_BY(pub_mu_);
  bool publishing_ ABSL_GUARDED_BY(pub_mu_) =
      false;  // a batch is being published
  bool writer_done_ ABSL_GUARDED_BY(pub_mu_) = false;
  std::thread thread_;
  std::thread publisher_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_REPORT_WRITER_H_
