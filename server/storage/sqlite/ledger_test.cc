// The host ledger's checkpoint and replay, through SqliteStorage on real
// files.
#include "server/storage/sqlite/ledger.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/storage/conformance/test_rows.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_test_util.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

// A copy of the files taken between two commits: what a restart after
// kill -9 finds.
void CopyStore(const std::string& from, const std::string& to) {
  for (const char* suffix : {"", "-wal"}) {
    auto data = testing::ReadFile(from + suffix);
    if (data.ok()) {
      ASSERT_TRUE(testing::WriteFile(to + suffix, *data).ok());
    }
  }
}

TEST(SqliteLedgerTest, IsRebuiltFromCheckpointAndLaterRows) {
  const std::string path = NewDbPath();
  SqliteOptions opts;
  opts.background_checkpoint = false;  // the files change only in WriteBatch
  opts.ledger_checkpoint_rows = 1000;
  auto s = SqliteStorage::Open(path, opts);
  ASSERT_TRUE(s.ok()) << s.status();
  // 5 hosts x 500 seqs; host h4 skips every tenth seq.
  std::vector<ReportRow> all;
  int64_t t = 0;
  for (uint64_t seq = 1; seq <= 500; ++seq) {
    for (int h = 0; h < 5; ++h) {
      if (h == 4 && seq % 10 == 0) continue;
      all.push_back(TestRow("h" + std::to_string(h), seq, ++t));
    }
  }
  for (size_t i = 0; i < all.size(); i += 100) {
    std::vector<ReportRow> batch(all.begin() + i,
                                 all.begin() + std::min(all.size(), i + 100));
    ASSERT_TRUE((*s)->WriteBatch(batch).ok());
  }
  const std::string copy = NewDbPath();
  CopyStore(path, copy);
  s->reset();

  auto c = SqliteStorage::Open(copy, opts);
  ASSERT_TRUE(c.ok()) << c.status();
  // 2450 rows; the checkpoints covered the first 2000.
  EXPECT_EQ((*c)->ledger_rows_replayed(), 450);
  std::map<std::string, LatestRow> latest;
  ASSERT_TRUE(
      (*c)->LoadLatest([&](const LatestRow& r) { latest[r.host_id] = r; })
          .ok());
  ASSERT_EQ(latest.size(), 5u);
  EXPECT_EQ(latest["h0"].latest_seq, 500u);
  EXPECT_EQ(latest["h0"].reports, 500u);
  EXPECT_EQ(latest["h0"].first_seen_ns, 2);
  EXPECT_EQ(latest["h0"].blob, "blob500");
  EXPECT_EQ(latest["h4"].latest_seq, 499u);
  EXPECT_EQ(latest["h4"].reports, 450u);
  // Every stored (host, seq) is a duplicate; h4's skipped seqs are new.
  auto again = (*c)->WriteBatch(all);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::count(again->begin(), again->end(), WriteOutcome::kDuplicate),
            static_cast<long>(all.size()));
  auto late = (*c)->WriteBatch(
      {TestRow("h4", 10, 1), TestRow("h4", 500, 1), TestRow("h4", 20, 1)});
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(std::count(late->begin(), late->end(), WriteOutcome::kStored), 3);
  EXPECT_EQ(*(*c)->CountReports(""), 2453);
}

// A host with far more gaps than memory keeps: its spilled runs are found
// again after a crash (a copy of the files between commits, with rows after
// the last checkpoint to replay) and after a clean close.
TEST(SqliteLedgerTest, SpilledRunsSurviveACrashAndAClose) {
  const std::string path = NewDbPath();
  SqliteOptions opts;
  opts.background_checkpoint = false;  // the files change only in WriteBatch
  opts.ledger_checkpoint_rows = 250;
  auto s = SqliteStorage::Open(path, opts);
  ASSERT_TRUE(s.ok()) << s.status();
  auto write = [](SqliteStorage& store, const std::vector<uint64_t>& seqs) {
    std::vector<WriteOutcome> all;
    for (size_t i = 0; i < seqs.size(); i += 50) {
      std::vector<ReportRow> batch;
      for (size_t j = i; j < std::min(seqs.size(), i + 50); ++j)
        batch.push_back(TestRow("g", seqs[j], static_cast<int64_t>(j)));
      auto out = store.WriteBatch(batch);
      EXPECT_TRUE(out.ok()) << out.status();
      if (out.ok()) all.insert(all.end(), out->begin(), out->end());
    }
    return all;
  };
  // 400 runs (1, 3, ..., 799), then every fourth seq (4, 8, ..., 800):
  // 600 rows in batches of 50, checkpoints at rows 250 and 500. Memory keeps
  // the newest 64 runs (673, ..., 799): seqs up to 671 are spilled, and the
  // fills 404, ..., 668 of rows 501-600 went to the store after the last
  // checkpoint.
  std::vector<uint64_t> first, fill, all;
  for (uint64_t seq = 1; seq < 800; seq += 2) first.push_back(seq);
  for (uint64_t seq = 4; seq <= 800; seq += 4) fill.push_back(seq);
  for (uint64_t seq = 1; seq <= 800; ++seq) all.push_back(seq);
  write(**s, first);
  write(**s, fill);
  const std::string copy = NewDbPath();
  CopyStore(path, copy);
  s->reset();  // a clean close checkpoints the ledger

  for (const std::string& p : {copy, path}) {
    SCOPED_TRACE(p == copy ? "after a crash" : "after a close");
    auto c = SqliteStorage::Open(p, opts);
    ASSERT_TRUE(c.ok()) << c.status();
    // The crash replays rows 501-600; the close checkpointed them.
    EXPECT_EQ((*c)->ledger_rows_replayed(), p == copy ? 100 : 0);
    // Stored: odd seqs and multiples of 4; new: 2, 6, ..., 798 (200).
    std::vector<WriteOutcome> out = write(**c, all);
    ASSERT_EQ(out.size(), 800u);
    for (uint64_t seq = 1; seq <= 800; ++seq) {
      const bool was_stored = seq % 2 == 1 || seq % 4 == 0;
      ASSERT_EQ(out[seq - 1],
                was_stored ? WriteOutcome::kDuplicate : WriteOutcome::kStored)
          << seq;
    }
    EXPECT_EQ(*(*c)->CountReports("g"), 800);
  }
}

}  // namespace
}  // namespace tracehealth::server
