#include "server/storage/seq_runs.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(SeqRunsTest, InOrderSeqsMakeOneRun) {
  SeqRuns s;
  for (uint64_t seq = 1; seq <= 1000; ++seq) {
    ASSERT_FALSE(s.Contains(seq));
    EXPECT_EQ(s.Insert(seq), 0u);
  }
  EXPECT_EQ(s.runs(), 1u);
  EXPECT_EQ(s.Encode(), "1-1000");
  EXPECT_TRUE(s.Contains(1));
  EXPECT_TRUE(s.Contains(1000));
  EXPECT_FALSE(s.Contains(0));
  EXPECT_FALSE(s.Contains(1001));
}

TEST(SeqRunsTest, GapsAndLateArrivals) {
  SeqRuns s;
  for (uint64_t seq : {1, 2, 3, 7, 8, 5, 10}) s.Insert(seq);
  EXPECT_EQ(s.Encode(), "1-3,5,7-8,10");
  EXPECT_FALSE(s.Contains(4));
  EXPECT_FALSE(s.Contains(6));
  EXPECT_FALSE(s.Contains(9));
  s.Insert(4);  // joins 1-3 and 5
  s.Insert(9);  // joins 7-8 and 10
  EXPECT_EQ(s.Encode(), "1-5,7-10");
  s.Insert(6);
  EXPECT_EQ(s.Encode(), "1-10");
  s.Insert(12);
  s.Insert(11);  // joins the previous run
  EXPECT_EQ(s.Encode(), "1-12");
}

TEST(SeqRunsTest, MatchesASetUnderRandomOrder) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> seqs(400);
  for (size_t i = 0; i < seqs.size(); ++i)
    seqs[i] = i * 2 + 1 + rng() % 2;  // distinct
  std::shuffle(seqs.begin(), seqs.end(), rng);
  SeqRuns s;
  std::set<uint64_t> want;
  for (size_t i = 0; i < seqs.size() && s.runs() < SeqRuns::kMaxRuns; ++i) {
    s.Insert(seqs[i]);
    want.insert(seqs[i]);
    for (uint64_t q = 0; q <= 802; ++q)
      ASSERT_EQ(s.Contains(q), want.count(q) == 1) << q;
  }
}

TEST(SeqRunsTest, MoreThanMaxRunsForgetsTheOldestGap) {
  SeqRuns s;
  // Every other seq: each insert opens a new run.
  for (uint64_t i = 0; i < SeqRuns::kMaxRuns; ++i)
    EXPECT_EQ(s.Insert(2 * i + 1), 0u);
  EXPECT_EQ(s.runs(), SeqRuns::kMaxRuns);
  EXPECT_FALSE(s.Contains(2));
  EXPECT_EQ(s.Insert(1000), 1u);  // the gap {2} closes
  EXPECT_EQ(s.runs(), SeqRuns::kMaxRuns);
  EXPECT_TRUE(s.Contains(2));
  EXPECT_FALSE(s.Contains(4));
  EXPECT_TRUE(s.Contains(1000));
}

TEST(SeqRunsTest, EncodeDecodeRoundTrip) {
  SeqRuns s;
  for (uint64_t seq : {3, 4, 5, 9, 20, 21}) s.Insert(seq);
  auto d = SeqRuns::Decode(s.Encode());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, s);
  // Any order, adjacent runs joined.
  d = SeqRuns::Decode("20-21,3-4,5,9");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Encode(), "3-5,9,20-21");
  EXPECT_TRUE(SeqRuns::Decode("")->empty());
}

TEST(SeqRunsTest, DecodeRejectsDamage) {
  for (const char* bad : {"x", "1-", "5-3", "1-4,3-6", "1,,2", "-1", "1-2-3"}) {
    EXPECT_FALSE(SeqRuns::Decode(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace tracehealth::server
