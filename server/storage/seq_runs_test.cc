#include "server/storage/seq_runs.h"

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

using A = SeqRuns::Answer;
using Runs = std::vector<SeqRuns::Run>;

TEST(SeqRunsTest, InOrderSeqsMakeOneRun) {
  SeqRuns s;
  Runs spilled;
  for (uint64_t seq = 1; seq <= 1000; ++seq) {
    ASSERT_EQ(s.Find(seq), A::kAbsent);
    s.Insert(seq, &spilled);
  }
  EXPECT_TRUE(spilled.empty());
  EXPECT_EQ(s.runs(), 1u);
  EXPECT_EQ(s.Encode(), "1-1000");
  EXPECT_EQ(s.Find(1), A::kStored);
  EXPECT_EQ(s.Find(1000), A::kStored);
  EXPECT_EQ(s.Find(0), A::kAbsent);
  EXPECT_EQ(s.Find(1001), A::kAbsent);
}

TEST(SeqRunsTest, GapsAndLateArrivals) {
  SeqRuns s;
  Runs spilled;
  for (uint64_t seq : {1, 2, 3, 7, 8, 5, 10}) s.Insert(seq, &spilled);
  EXPECT_EQ(s.Encode(), "1-3,5,7-8,10");
  EXPECT_EQ(s.Find(4), A::kAbsent);
  EXPECT_EQ(s.Find(6), A::kAbsent);
  EXPECT_EQ(s.Find(9), A::kAbsent);
  s.Insert(4, &spilled);  // joins 1-3 and 5
  s.Insert(9, &spilled);  // joins 7-8 and 10
  EXPECT_EQ(s.Encode(), "1-5,7-10");
  s.Insert(6, &spilled);
  EXPECT_EQ(s.Encode(), "1-10");
  s.Insert(12, &spilled);
  s.Insert(11, &spilled);  // joins the previous run
  EXPECT_EQ(s.Encode(), "1-12");
  EXPECT_TRUE(spilled.empty());
}

// A set kept by SeqRuns plus a "store" holding what it spills answers every
// query as a plain set would, whatever the number of runs.
TEST(SeqRunsTest, WithItsSpilledRunsMatchesASetForAnyNumberOfRuns) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> seqs(2000);
  for (size_t i = 0; i < seqs.size(); ++i)
    seqs[i] = i * 2 + 1 + rng() % 2;  // distinct
  std::shuffle(seqs.begin(), seqs.end(), rng);
  SeqRuns s;
  Runs store;
  auto stored = [&](uint64_t q) {
    switch (s.Find(q)) {
      case A::kStored:
        return true;
      case A::kAbsent:
        return false;
      case A::kAskStore:
        for (const auto& [first, last] : store) {
          if (first <= q && q <= last) return true;
        }
        return false;
    }
    return false;
  };
  std::set<uint64_t> want;
  size_t most_runs = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    ASSERT_FALSE(stored(seqs[i])) << seqs[i];
    s.Insert(seqs[i], &store);
    want.insert(seqs[i]);
    most_runs = std::max(most_runs, s.runs());
    if (i % 97 == 0 || i + 1 == seqs.size()) {
      for (uint64_t q = 0; q <= 4002; ++q)
        ASSERT_EQ(stored(q), want.count(q) == 1) << q << " after " << i;
    }
  }
  EXPECT_EQ(most_runs, SeqRuns::kMaxRuns);
  EXPECT_GT(s.spilled_through(), 0u);
  // Spilled runs are disjoint.
  std::sort(store.begin(), store.end());
  for (size_t i = 1; i < store.size(); ++i)
    EXPECT_LT(store[i - 1].second, store[i].first);
}

TEST(SeqRunsTest, MoreThanMaxRunsSpillsTheOldestRun) {
  SeqRuns s;
  Runs spilled;
  // Every other seq: each insert opens a new run. 64 runs: 1, 3, ..., 127.
  for (uint64_t i = 0; i < SeqRuns::kMaxRuns; ++i)
    s.Insert(2 * i + 1, &spilled);
  EXPECT_TRUE(spilled.empty());
  EXPECT_EQ(s.runs(), SeqRuns::kMaxRuns);
  EXPECT_EQ(s.Find(2), A::kAbsent);
  // The 65th run spills the first, [1, 1].
  s.Insert(1000, &spilled);
  EXPECT_EQ(spilled, (Runs{{1, 1}}));
  EXPECT_EQ(s.spilled_through(), 1u);
  EXPECT_EQ(s.runs(), SeqRuns::kMaxRuns);
  EXPECT_EQ(s.Find(1), A::kAskStore);
  EXPECT_EQ(s.Find(0), A::kAskStore);
  // The gap after the spilled run is still answered from memory.
  EXPECT_EQ(s.Find(2), A::kAbsent);
  EXPECT_EQ(s.Find(3), A::kStored);
  EXPECT_EQ(s.Find(1000), A::kStored);
  // 2 joins 3 in memory: nothing spills.
  spilled.clear();
  s.Insert(2, &spilled);
  EXPECT_TRUE(spilled.empty());
  EXPECT_EQ(s.Find(2), A::kStored);
  // A seq at or below spilled_through goes to the store as it is.
  SeqRuns t;
  for (uint64_t i = 0; i <= SeqRuns::kMaxRuns; ++i)
    t.Insert(10 * (i + 1), &spilled);  // 10, 20, ..., 650: spills [10, 10]
  EXPECT_EQ(t.spilled_through(), 10u);
  spilled.clear();
  t.Insert(5, &spilled);
  EXPECT_EQ(spilled, (Runs{{5, 5}}));
  EXPECT_EQ(t.runs(), SeqRuns::kMaxRuns);
  EXPECT_EQ(t.Encode().substr(0, 6), "20,30,");
}

TEST(SeqRunsTest, EncodeDecodeRoundTrip) {
  SeqRuns s;
  Runs spilled;
  for (uint64_t seq : {3, 4, 5, 9, 20, 21}) s.Insert(seq, &spilled);
  auto d = SeqRuns::Decode(s.Encode());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, s);
  // Any order, adjacent runs joined.
  d = SeqRuns::Decode("20-21,3-4,5,9");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->Encode(), "3-5,9,20-21");
  EXPECT_TRUE(SeqRuns::Decode("")->empty());
  d = SeqRuns::Decode("8-9", 7);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->spilled_through(), 7u);
  EXPECT_EQ(d->Find(7), A::kAskStore);
  EXPECT_EQ(d->Find(8), A::kStored);
  EXPECT_FALSE(SeqRuns::Decode("", 7)->empty());
}

TEST(SeqRunsTest, DecodeRejectsDamage) {
  const std::pair<const char*, const char*> cases[] = {
      {"x", "bad seq run \"x\""},
      {"1-", "bad seq run \"1-\""},
      {"5-3", "bad seq run \"5-3\""},
      {"1-4,3-6", "overlapping seq runs in \"1-4,3-6\""},
      {"1-4,4", "overlapping seq runs in \"1-4,4\""},
      {"1,,2", "bad seq run \"\""},
      {"-1", "bad seq run \"-1\""},
      {"1-2-3", "bad seq run \"1-2-3\""},
  };
  for (const auto& [text, message] : cases) {
    absl::StatusOr<SeqRuns> r = SeqRuns::Decode(text);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << text;
    EXPECT_EQ(r.status().message(), message) << text;
  }
  // Touching runs are one run.
  EXPECT_TRUE(SeqRuns::Decode("1-4,5-6").ok());
  // A run at or below the spilled seqs.
  absl::StatusOr<SeqRuns> low = SeqRuns::Decode("7-9", 7);
  EXPECT_EQ(low.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(low.status().message(),
            "seq run \"7-9\" not above the spilled seqs 7");
  EXPECT_TRUE(SeqRuns::Decode("8-9", 7).ok());
  // 65 runs: more than memory keeps.
  std::string runs;
  for (int i = 0; i < 65; ++i) runs += std::to_string(2 * i + 1) + ",";
  runs.pop_back();
  absl::StatusOr<SeqRuns> many = SeqRuns::Decode(runs);
  EXPECT_EQ(many.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(many.status().message(),
            "65 seq runs, more than 64 kept in memory");
  EXPECT_TRUE(SeqRuns::Decode(runs.substr(0, runs.rfind(','))).ok());
}

}  // namespace
}  // namespace tracehealth::server
