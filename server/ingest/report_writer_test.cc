#include "server/ingest/report_writer.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

WriteRequest Req(const std::string& host, uint64_t seq,
                 std::function<void(absl::StatusOr<WriteOutcome>)> done) {
  auto report = std::make_shared<v1::HostReport>();
  report->set_host_id(host);
  report->set_seq(seq);
  WriteRequest r;
  r.row.host_id = host;
  r.row.seq = seq;
  r.row.received_at_ns = 1;
  r.row.blob = report->SerializeAsString();
  r.report = report;
  r.done = std::move(done);
  return r;
}

TEST(ReportWriterTest, GroupCommitsFromManyThreadsAndDetectsDuplicates) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  std::atomic<int> stored{0}, dup{0}, failed{0}, batches{0}, hooked{0};
  {
    ReportWriter writer(storage->get(), {},
                        [&](absl::Span<const CommittedReport> c, const BatchStats& s) {
                          batches++;
                          hooked += c.size();
                          EXPECT_EQ(c.size(), s.stored);
                        });
    auto done = [&](absl::StatusOr<WriteOutcome> o) {
      if (!o.ok()) {
        failed++;
      } else if (*o == WriteOutcome::kStored) {
        stored++;
      } else {
        dup++;
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (uint64_t seq = 1; seq <= 500; ++seq) {
          ASSERT_TRUE(writer.Submit(Req("h" + std::to_string(t), seq, done)));
          // Every 10th report is sent twice (a replay).
          if (seq % 10 == 0) {
            ASSERT_TRUE(writer.Submit(Req("h" + std::to_string(t), seq, done)));
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    writer.Stop();
    EXPECT_FALSE(writer.Submit(Req("late", 1, done)));
  }
  EXPECT_EQ(stored.load(), 2000);
  EXPECT_EQ(dup.load(), 200);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(hooked.load(), 2000);
  EXPECT_LT(batches.load(), 2200);  // some batching happened
  EXPECT_EQ(*(*storage)->CountReports(""), 2000);
}

// Wraps real storage and holds WriteBatch until released, to fill the queue.
class HeldStorage : public Storage {
 public:
  explicit HeldStorage(Storage* inner) : inner_(inner) {}
  absl::StatusOr<std::vector<WriteOutcome>> WriteBatch(
      absl::Span<const ReportRow> rows) override {
    if (fail_) return absl::ResourceExhaustedError("database or disk is full");
    if (!entered_.HasBeenNotified()) entered_.Notify();
    release_.WaitForNotification();
    return inner_->WriteBatch(rows);
  }
  absl::Status LoadLatest(const std::function<void(const LatestRow&)>& fn) override {
    return inner_->LoadLatest(fn);
  }
  absl::StatusOr<int64_t> DeleteReportsReceivedBefore(int64_t t) override {
    return inner_->DeleteReportsReceivedBefore(t);
  }
  absl::StatusOr<int64_t> CountReports(const std::string& h) override {
    return inner_->CountReports(h);
  }
  absl::StatusOr<std::string> GetReport(const std::string& h, uint64_t s) override {
    return inner_->GetReport(h, s);
  }
  absl::Status PutAlert(const AlertRow& a) override { return inner_->PutAlert(a); }
  absl::StatusOr<std::vector<AlertRow>> ListAlerts(const AlertFilter& f) override {
    return inner_->ListAlerts(f);
  }
  absl::StatusOr<int64_t> SizeBytes() override { return inner_->SizeBytes(); }

  bool fail_ = false;
  absl::Notification entered_;
  absl::Notification release_;

 private:
  Storage* inner_;
};

TEST(ReportWriterTest, SubmitBlocksWhenQueueIsFull) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  HeldStorage held(storage->get());
  ReportWriter::Options opts;
  opts.queue_capacity = 3;
  ReportWriter writer(&held, opts, nullptr);
  std::atomic<int> acked{0};
  auto done = [&](absl::StatusOr<WriteOutcome> o) { acked++; };
  ASSERT_TRUE(writer.Submit(Req("h", 1, done)));
  held.entered_.WaitForNotification();  // the writer holds seq 1
  for (uint64_t seq = 2; seq <= 4; ++seq) ASSERT_TRUE(writer.Submit(Req("h", seq, done)));
  EXPECT_EQ(writer.queue_depth(), 3u);
  std::atomic<bool> fifth_in{false};
  std::thread blocked([&] {
    writer.Submit(Req("h", 5, done));
    fifth_in = true;
  });
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_FALSE(fifth_in.load());
  EXPECT_EQ(acked.load(), 0);  // nothing acked before its commit
  held.release_.Notify();
  blocked.join();
  EXPECT_TRUE(fifth_in.load());
  writer.Stop();
  EXPECT_EQ(acked.load(), 5);
  EXPECT_EQ(*(*storage)->CountReports("h"), 5);
}

TEST(ReportWriterTest, EnqueueNeverBlocksAndSaysWhenFull) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  HeldStorage held(storage->get());
  ReportWriter::Options opts;
  opts.queue_capacity = 3;
  ReportWriter writer(&held, opts, nullptr);
  std::atomic<int> acked{0};
  auto done = [&](absl::StatusOr<WriteOutcome> o) { acked++; };
  bool full = true;
  ASSERT_TRUE(writer.Enqueue(Req("h", 1, done), &full));
  EXPECT_FALSE(full);
  held.entered_.WaitForNotification();  // the writer holds seq 1
  ASSERT_TRUE(writer.Enqueue(Req("h", 2, done), &full));
  EXPECT_FALSE(full);
  ASSERT_TRUE(writer.Enqueue(Req("h", 3, done), &full));
  EXPECT_FALSE(full);
  ASSERT_TRUE(writer.Enqueue(Req("h", 4, done), &full));
  EXPECT_TRUE(full);  // 3 queued
  // Past capacity it still queues (the caller is told to stop producing).
  ASSERT_TRUE(writer.Enqueue(Req("h", 5, done), &full));
  EXPECT_TRUE(full);
  EXPECT_EQ(writer.queue_depth(), 4u);
  EXPECT_EQ(acked.load(), 0);
  held.release_.Notify();
  writer.Stop();
  EXPECT_EQ(acked.load(), 5);
  EXPECT_EQ(*(*storage)->CountReports("h"), 5);
  EXPECT_FALSE(writer.Enqueue(Req("h", 6, done), &full));  // stopped
  EXPECT_EQ(acked.load(), 5);
}

TEST(ReportWriterTest, StorageFailureReachesEveryCallback) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  HeldStorage failing(storage->get());
  failing.fail_ = true;
  std::atomic<int> errors{0}, hooks{0};
  {
    ReportWriter writer(&failing, {},
                        [&](absl::Span<const CommittedReport> c, const BatchStats& s) {
                          EXPECT_TRUE(s.failed);
                          EXPECT_TRUE(c.empty());
                          hooks++;
                        });
    for (uint64_t seq = 1; seq <= 3; ++seq) {
      ASSERT_TRUE(writer.Submit(Req("h", seq, [&](absl::StatusOr<WriteOutcome> o) {
        if (absl::IsResourceExhausted(o.status())) errors++;
      })));
    }
    writer.Stop();
  }
  EXPECT_EQ(errors.load(), 3);
  EXPECT_GE(hooks.load(), 1);
  EXPECT_EQ(*(*storage)->CountReports(""), 0);
}

TEST(ReportWriterTest, CancelledRequestsAreNotWritten) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  HeldStorage held(storage->get());
  ReportWriter writer(&held, {}, nullptr);
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  std::atomic<int> aborted{0}, stored{0};
  auto done = [&](absl::StatusOr<WriteOutcome> o) {
    if (absl::IsAborted(o.status())) aborted++;
    if (o.ok()) stored++;
  };
  WriteRequest first = Req("h", 1, done);
  first.cancelled = cancel;
  ASSERT_TRUE(writer.Submit(std::move(first)));
  held.entered_.WaitForNotification();  // seq 1 is being written
  for (uint64_t seq = 2; seq <= 4; ++seq) {
    WriteRequest r = Req("h", seq, done);
    r.cancelled = cancel;
    ASSERT_TRUE(writer.Submit(std::move(r)));
  }
  ASSERT_TRUE(writer.Submit(Req("other", 1, done)));
  cancel->store(true);  // as a failed stream does
  held.release_.Notify();
  writer.Stop();
  EXPECT_EQ(stored.load(), 2);   // h/1 (already in flight) and other/1
  EXPECT_EQ(aborted.load(), 3);  // h/2..4
  EXPECT_EQ(*(*storage)->CountReports("h"), 1);
}

}  // namespace
}  // namespace tracehealth::server
