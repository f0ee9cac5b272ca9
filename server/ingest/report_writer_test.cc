#include "server/ingest/report_writer.h"

#include <pthread.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/storage/controlled_report_store.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

WriteRequest Req(const std::string& host, uint64_t seq,
                 std::function<void(absl::StatusOr<WriteOutcome>)> done) {
  v1::HostReport report;
  report.set_host_id(host);
  report.set_seq(seq);
  WriteRequest r;
  r.row.host_id = host;
  r.row.seq = seq;
  r.row.received_at_ns = 1;
  r.row.blob = report.SerializeAsString();
  r.done = std::move(done);
  return r;
}

// Enqueue, ignoring whether the queue is full.
bool Put(ReportWriter& writer, WriteRequest req) {
  bool full = false;
  return writer.Enqueue(std::move(req), &full);
}

TEST(ReportWriterTest, HandsOnTheParseAndTheRecord) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  auto parsed = std::make_shared<v1::HostReport>();
  parsed->set_host_id("h");
  parsed->set_seq(1);
  const v1::HostReport* given = parsed.get();
  absl::Notification hooked;
  const v1::HostReport* seen = nullptr;
  std::string record;
  {
    ReportWriter writer(
        storage->get(), {},
        [&](absl::Span<const CommittedReport> c, const BatchStats&) {
          if (c.empty()) return;
          seen = c[0].report->report().get();
          record = c[0].record;
          hooked.Notify();
        });
    WriteRequest req = Req("h", 1, nullptr);
    req.row.record = "rec";
    req.parsed = std::move(parsed);
    ASSERT_TRUE(Put(writer, std::move(req)));
    ASSERT_TRUE(hooked.WaitForNotificationWithTimeout(absl::Seconds(10)));
  }
  // The same message, not a parse of the stored bytes.
  EXPECT_EQ(seen, given);
  EXPECT_EQ(record, "rec");
}

TEST(ReportWriterTest, GroupCommitsFromManyThreadsAndDetectsDuplicates) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  std::atomic<int> stored{0}, dup{0}, failed{0}, batches{0}, hooked{0};
  {
    ReportWriter writer(
        storage->get(), {},
        [&](absl::Span<const CommittedReport> c, const BatchStats& s) {
          batches++;
          hooked += c.size();
          EXPECT_EQ(c.size(), s.stored);
          // Each stored row reaches the hook with its bytes.
          for (const CommittedReport& r : c) {
            EXPECT_EQ(r.report->report()->host_id(), r.report->host_id());
            EXPECT_EQ(r.report->report()->seq(), r.report->seq());
          }
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
          ASSERT_TRUE(Put(writer, Req("h" + std::to_string(t), seq, done)));
          // Every 10th report is sent twice (a replay).
          if (seq % 10 == 0) {
            ASSERT_TRUE(Put(writer, Req("h" + std::to_string(t), seq, done)));
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    writer.Stop();
    EXPECT_FALSE(Put(writer, Req("late", 1, done)));
  }
  EXPECT_EQ(stored.load(), 2000);
  EXPECT_EQ(dup.load(), 200);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(hooked.load(), 2000);
  EXPECT_LT(batches.load(), 2200);  // some batching happened
  EXPECT_EQ(*(*storage)->CountReports(""), 2000);
}

// A writer with a queue of 3 over storage whose commits are held until
// released.
class HeldWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
    ASSERT_TRUE(s.ok());
    storage_ = std::move(*s);
    held_ = std::make_unique<ControlledReportStore>(storage_.get());
    held_->hold_ = true;
    ReportWriter::Options opts;
    opts.queue_capacity = 3;
    writer_ = std::make_unique<ReportWriter>(held_.get(), opts, nullptr);
  }
  void TearDown() override {
    if (!held_->release_.HasBeenNotified()) held_->release_.Notify();
    writer_->Stop();
  }

  std::unique_ptr<SqliteStorage> storage_;
  std::unique_ptr<ControlledReportStore> held_;
  std::unique_ptr<ReportWriter> writer_;
  std::atomic<int> acked_{0};
  std::function<void(absl::StatusOr<WriteOutcome>)> done_ =
      [this](absl::StatusOr<WriteOutcome>) { acked_++; };
};

TEST_F(HeldWriterTest, EnqueueNeverBlocksAndSaysWhenFull) {
  bool full = true;
  ASSERT_TRUE(writer_->Enqueue(Req("h", 1, done_), &full));
  EXPECT_FALSE(full);
  held_->entered_.WaitForNotification();  // the writer holds seq 1
  ASSERT_TRUE(writer_->Enqueue(Req("h", 2, done_), &full));
  EXPECT_FALSE(full);
  ASSERT_TRUE(writer_->Enqueue(Req("h", 3, done_), &full));
  EXPECT_FALSE(full);
  ASSERT_TRUE(writer_->Enqueue(Req("h", 4, done_), &full));
  EXPECT_TRUE(full);  // 3 queued
  // Past capacity it still queues (the caller is told to stop producing).
  ASSERT_TRUE(writer_->Enqueue(Req("h", 5, done_), &full));
  EXPECT_TRUE(full);
  EXPECT_EQ(writer_->queue_depth(), 4u);
  EXPECT_EQ(acked_.load(), 0);
  held_->release_.Notify();
  writer_->Stop();
  EXPECT_EQ(acked_.load(), 5);
  EXPECT_EQ(*storage_->CountReports("h"), 5);
  EXPECT_FALSE(writer_->Enqueue(Req("h", 6, done_), &full));  // stopped
  EXPECT_EQ(acked_.load(), 5);
}

TEST(ReportWriterTest, StorageFailureReachesEveryCallback) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  ControlledReportStore failing(storage->get());
  failing.fail_ = true;
  std::atomic<int> errors{0}, hooks{0};
  {
    ReportWriter writer(
        &failing, {},
        [&](absl::Span<const CommittedReport> c, const BatchStats& s) {
          EXPECT_TRUE(s.failed);
          EXPECT_TRUE(c.empty());
          hooks++;
        });
    for (uint64_t seq = 1; seq <= 3; ++seq) {
      ASSERT_TRUE(
          Put(writer, Req("h", seq, [&](absl::StatusOr<WriteOutcome> o) {
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
  ControlledReportStore held(storage->get());
  held.hold_ = true;
  ReportWriter writer(&held, {}, nullptr);
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  std::atomic<int> aborted{0}, stored{0};
  auto done = [&](absl::StatusOr<WriteOutcome> o) {
    if (absl::IsAborted(o.status())) aborted++;
    if (o.ok()) stored++;
  };
  WriteRequest first = Req("h", 1, done);
  first.cancelled = cancel;
  ASSERT_TRUE(Put(writer, std::move(first)));
  held.entered_.WaitForNotification();  // seq 1 is being written
  for (uint64_t seq = 2; seq <= 4; ++seq) {
    WriteRequest r = Req("h", seq, done);
    r.cancelled = cancel;
    ASSERT_TRUE(Put(writer, std::move(r)));
  }
  ASSERT_TRUE(Put(writer, Req("other", 1, done)));
  cancel->store(true);  // as a failed stream does
  held.release_.Notify();
  writer.Stop();
  EXPECT_EQ(stored.load(), 2);   // h/1 (already in flight) and other/1
  EXPECT_EQ(aborted.load(), 3);  // h/2..4
  EXPECT_EQ(*(*storage)->CountReports("h"), 1);
}

// What ran, on which thread, in order.
class CallLog {
 public:
  void Add(const std::string& what) {
    char name[16] = {0};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    absl::MutexLock lock(&mu_);
    calls_.push_back(what + "@" + name);
  }
  std::vector<std::string> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
};

TEST(ReportWriterTest, CallbacksRunOnTheThreadsTheContractNames) {
  auto storage = SqliteStorage::Open(testing::NewTempDir("w") + "/t.db");
  ASSERT_TRUE(storage.ok());
  ControlledReportStore held(storage->get());
  held.hold_ = true;
  CallLog log;
  ReportWriter writer(
      &held, {}, [&](absl::Span<const CommittedReport> c, const BatchStats& s) {
        log.Add(absl::StrCat("hook(", c.size(), s.failed ? ",failed)" : ")"));
      });
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto done = [&](uint64_t seq) {
    return [&log, seq](absl::StatusOr<WriteOutcome> o) {
      log.Add(absl::StrCat(
          o.ok() ? "stored "
                 : (absl::IsAborted(o.status()) ? "aborted " : "failed "),
          seq));
    };
  };
  ASSERT_TRUE(Put(writer, Req("h", 1, done(1))));
  held.entered_.WaitForNotification();  // seq 1 is being written
  WriteRequest second = Req("h", 2, done(2));
  second.cancelled = cancel;
  ASSERT_TRUE(Put(writer, std::move(second)));
  cancel->store(true);
  held.release_.Notify();
  writer.Stop();
  // The commit of seq 1: its hook, then its `done`, on the publisher; seq 2,
  // cancelled, is answered by the writer when it forms the next batch, which
  // is then empty (no hook). The two threads' calls interleave in any order.
  std::vector<std::string> calls = log.calls();
  std::vector<std::string> publisher, writer_thread;
  for (const std::string& c : calls) {
    (absl::EndsWith(c, "@ingest-publish") ? publisher : writer_thread)
        .push_back(c);
  }
  EXPECT_EQ(publisher, (std::vector<std::string>{"hook(1)@ingest-publish",
                                                 "stored 1@ingest-publish"}));
  EXPECT_EQ(writer_thread, std::vector<std::string>{"aborted 2@ingest-writer"});

  // A failed commit: the hook, told so, then each `done`, on the publisher.
  ControlledReportStore failing(storage->get());
  failing.fail_ = true;
  CallLog failed_log;
  ReportWriter failing_writer(
      &failing, {},
      [&](absl::Span<const CommittedReport> c, const BatchStats& s) {
        failed_log.Add(
            absl::StrCat("hook(", c.size(), s.failed ? ",failed)" : ")"));
      });
  ASSERT_TRUE(
      Put(failing_writer, Req("h", 3, [&](absl::StatusOr<WriteOutcome> o) {
            failed_log.Add(absl::StrCat(
                absl::IsResourceExhausted(o.status()) ? "full " : "? ", 3));
          })));
  failing_writer.Stop();
  EXPECT_EQ(failed_log.calls(),
            (std::vector<std::string>{"hook(0,failed)@ingest-publish",
                                      "full 3@ingest-publish"}));
}

}  // namespace
}  // namespace tracehealth::server
