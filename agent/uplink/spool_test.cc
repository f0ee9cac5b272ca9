#include "agent/uplink/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/state/state_file.h"
#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

std::string Payload(uint64_t seq, size_t size = 100) {
  std::string p = absl::StrCat("report-", seq, "-");
  p.resize(size, static_cast<char>('a' + seq % 26));
  return p;
}

std::vector<uint64_t> Drain(Spool* spool) {
  std::vector<uint64_t> seqs;
  uint64_t after = 0;
  while (auto r = spool->NextAfter(after)) {
    EXPECT_EQ(r->second, Payload(r->first)) << r->first;
    seqs.push_back(r->first);
    after = r->first;
  }
  return seqs;
}

std::vector<std::string> Segments(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  while (struct dirent* e = readdir(d)) {
    if (absl::StartsWith(e->d_name, "seg-"))
      out.push_back(dir + "/" + e->d_name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SpoolTest, KeepsOrderAndSurvivesRestart) {
  std::string dir = TestTempDir("spool");
  {
    auto spool = Spool::Open(dir, 1 << 20, 4096);
    ASSERT_TRUE(spool.ok()) << spool.status();
    for (uint64_t s = 1; s <= 100; ++s) {
      ASSERT_TRUE((*spool)->Append(s, Payload(s)).ok());
    }
    EXPECT_EQ((*spool)->depth(), 100u);
    EXPECT_GT(Segments(dir).size(), 1u);  // several segments were used
    ASSERT_TRUE((*spool)->Ack(40).ok());
    EXPECT_TRUE((*spool)->Remove(50));
    EXPECT_FALSE((*spool)->Remove(50));
  }
  auto spool = Spool::Open(dir, 1 << 20, 4096);
  ASSERT_TRUE(spool.ok());
  std::vector<uint64_t> seqs = Drain(spool->get());
  ASSERT_FALSE(seqs.empty());
  EXPECT_EQ(seqs.front(), 41u);
  EXPECT_EQ(seqs.back(), 100u);
  EXPECT_EQ((*spool)->corrupt_total(), 0u);
  EXPECT_EQ((*spool)->last_seq(), 100u);
  // Appends continue after the loaded seqs, never before.
  EXPECT_FALSE((*spool)->Append(100, Payload(100)).ok());
  EXPECT_TRUE((*spool)->Append(101, Payload(101)).ok());
}

TEST(SpoolTest, FullDropsOldestAndCounts) {
  std::string dir = TestTempDir("spool");
  const uint64_t record = kSpoolRecordHeader + 1000;
  auto spool = Spool::Open(dir, 10 * record, 4096);
  ASSERT_TRUE(spool.ok());
  for (uint64_t s = 1; s <= 25; ++s) {
    ASSERT_TRUE((*spool)->Append(s, Payload(s, 1000)).ok());
    EXPECT_LE((*spool)->bytes(), 10 * record);
  }
  EXPECT_EQ((*spool)->depth(), 10u);
  EXPECT_EQ((*spool)->dropped_total(), 15u);
  auto first = (*spool)->NextAfter(0);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->first, 16u);
  // Dropped records stay dropped after a restart.
  spool->reset();
  auto again = Spool::Open(dir, 10 * record, 4096);
  EXPECT_EQ((*again)->NextAfter(0)->first, 16u);
  EXPECT_EQ((*again)->depth(), 10u);
}

TEST(SpoolTest, RejectsOversizedRecord) {
  auto spool = Spool::Open(TestTempDir("spool"), 4096);
  EXPECT_TRUE(
      absl::IsInvalidArgument((*spool)->Append(1, std::string(5000, 'x'))));
  EXPECT_TRUE((*spool)->Append(1, "small").ok());
}

TEST(SpoolTest, CorruptRecordsAreSkippedAndCounted) {
  std::string dir = TestTempDir("spool");
  {
    auto spool = Spool::Open(dir, 1 << 20, 1 << 20);
    for (uint64_t s = 1; s <= 10; ++s) {
      ASSERT_TRUE((*spool)->Append(s, Payload(s)).ok());
    }
  }
  std::vector<std::string> segs = Segments(dir);
  ASSERT_EQ(segs.size(), 1u);
  // Flip a payload byte of record 3 and the magic of record 7.
  const uint64_t rec = kSpoolRecordHeader + 100;
  int fd = open(segs[0].c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  char c = 'X';
  ASSERT_EQ(pwrite(fd, &c, 1, 2 * rec + kSpoolRecordHeader + 50), 1);
  ASSERT_EQ(pwrite(fd, &c, 1, 6 * rec), 1);
  close(fd);
  auto spool = Spool::Open(dir, 1 << 20, 1 << 20);
  ASSERT_TRUE(spool.ok());
  EXPECT_EQ(Drain(spool->get()),
            (std::vector<uint64_t>{1, 2, 4, 5, 6, 8, 9, 10}));
  EXPECT_EQ((*spool)->corrupt_total(), 2u);
}

TEST(SpoolTest, TruncatedTailIsSkippedAndNewRecordsFollow) {
  std::string dir = TestTempDir("spool");
  {
    auto spool = Spool::Open(dir, 1 << 20, 1 << 20);
    for (uint64_t s = 1; s <= 5; ++s) {
      ASSERT_TRUE((*spool)->Append(s, Payload(s)).ok());
    }
  }
  std::vector<std::string> segs = Segments(dir);
  ASSERT_EQ(truncate(segs[0].c_str(), 4 * (kSpoolRecordHeader + 100) + 30), 0);
  {
    auto spool = Spool::Open(dir, 1 << 20, 1 << 20);
    EXPECT_EQ(Drain(spool->get()), (std::vector<uint64_t>{1, 2, 3, 4}));
    EXPECT_EQ((*spool)->corrupt_total(), 1u);
    ASSERT_TRUE((*spool)->Append(6, Payload(6)).ok());
  }
  auto spool = Spool::Open(dir, 1 << 20, 1 << 20);
  EXPECT_EQ(Drain(spool->get()), (std::vector<uint64_t>{1, 2, 3, 4, 6}));
}

TEST(SpoolTest, AckDeletesConsumedSegments) {
  std::string dir = TestTempDir("spool");
  auto spool = Spool::Open(dir, 1 << 20, 1000);
  for (uint64_t s = 1; s <= 50; ++s) {
    ASSERT_TRUE((*spool)->Append(s, Payload(s)).ok());
  }
  size_t before = Segments(dir).size();
  ASSERT_TRUE((*spool)->Ack(50).ok());
  EXPECT_EQ((*spool)->depth(), 0u);
  EXPECT_EQ((*spool)->bytes(), 0u);
  EXPECT_LT(Segments(dir).size(), before);
  EXPECT_LE(Segments(dir).size(), 1u);
  EXPECT_FALSE((*spool)->NextAfter(0).has_value());
}

}  // namespace
}  // namespace tracehealth::agent
