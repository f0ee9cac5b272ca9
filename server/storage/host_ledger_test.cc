#include "server/storage/host_ledger.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(HostLedgerTest, RecordsSeqsTimesAndTheNewestRow) {
  HostLedger l;
  std::vector<SeqRuns::Run> spilled;
  EXPECT_EQ(l.Find("a", 1), SeqRuns::Answer::kAbsent);
  EXPECT_EQ(l.Find("a"), nullptr);
  l.Record("a", 5, 500, 10, &spilled);
  l.Record("a", 3, 300, 11, &spilled);  // late: older seq, later row
  l.Record("b", 1, 100, 12, &spilled);
  EXPECT_TRUE(spilled.empty());
  EXPECT_EQ(l.Find("a", 5), SeqRuns::Answer::kStored);
  EXPECT_EQ(l.Find("a", 3), SeqRuns::Answer::kStored);
  EXPECT_EQ(l.Find("a", 4), SeqRuns::Answer::kAbsent);
  EXPECT_EQ(l.Find("b", 5), SeqRuns::Answer::kAbsent);
  const LedgerEntry* a = l.Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->first_seen_ns, 300);
  EXPECT_EQ(a->last_seen_ns, 500);
  EXPECT_EQ(a->reports, 2u);
  EXPECT_EQ(a->latest_seq, 5u);
  EXPECT_EQ(a->latest_rowid, 10);
  EXPECT_EQ(l.size(), 2u);
}

TEST(HostLedgerTest, TracksHostsChangedSinceTheLastCheckpoint) {
  HostLedger l;
  LedgerEntry restored;
  restored.reports = 7;
  restored.latest_seq = 7;
  l.Restore("old", restored);
  EXPECT_EQ(l.changed(), 0u);
  std::vector<SeqRuns::Run> spilled;
  l.Record("a", 1, 1, 1, &spilled);
  l.Record("a", 2, 2, 2, &spilled);
  l.Record("old", 8, 3, 3, &spilled);
  std::map<std::string, uint64_t> seen;
  l.ForEachChanged(
      [&](const std::string& h, const LedgerEntry& e) { seen[h] = e.reports; });
  EXPECT_EQ(seen, (std::map<std::string, uint64_t>{{"a", 2}, {"old", 8}}));
  l.ClearChanged();
  EXPECT_EQ(l.changed(), 0u);
  l.Record("a", 3, 4, 4, &spilled);
  EXPECT_EQ(l.changed(), 1u);
  l.Clear();
  EXPECT_EQ(l.size(), 0u);
  EXPECT_EQ(l.changed(), 0u);
}

}  // namespace
}  // namespace tracehealth::server
