#include "agent/collect/kmsg_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

// A host root whose dev/kmsg holds `content`.
std::string RootWith(const std::string& content) {
  std::string root = TestTempDir("kmsg");
  mkdir((root + "/dev").c_str(), 0755);
  std::ofstream(root + "/dev/kmsg", std::ios::binary) << content;
  return root;
}

void Append(const std::string& root, const std::string& content) {
  std::ofstream(root + "/dev/kmsg", std::ios::binary | std::ios::app)
      << content;
}

struct Got {
  std::vector<uint64_t> seqs;
  std::vector<std::string> texts;
};

// The status of the Read; `*at_end` whether it read all there was.
absl::Status ReadAll(KmsgReader& r, Got* got, size_t stop_after = SIZE_MAX,
                     bool* at_end = nullptr) {
  absl::StatusOr<bool> end =
      r.Read([&] { return got->seqs.size() < stop_after; },
             [&](const KmsgRecord& rec) {
               got->seqs.push_back(rec.seq);
               got->texts.emplace_back(rec.text);
             });
  if (at_end != nullptr) *at_end = end.ok() && *end;
  return end.status();
}

TEST(KmsgReaderTest, ReadsAFileOfRecordsAndSkipsWhatIsNotOne) {
  const std::string root = RootWith(
      "6,1,100,-;first\n"
      " SUBSYSTEM=acpi\n"
      " DEVICE=+acpi:PNP0A08:00\n"
      "\n"
      "garbage without a prefix\n"  // malformed
      "6,2,200,-\n"                 // truncated: no ';'
      "6,3,300,-;" +
      std::string(9000, 'x') +
      "\n"  // oversized
      "6,4,400,-;last\n");
  KmsgReader r(root, KmsgReader::Options());
  Got got;
  ASSERT_TRUE(ReadAll(r, &got).ok());
  EXPECT_FALSE(r.is_device());
  EXPECT_EQ(got.seqs, (std::vector<uint64_t>{1, 4}));
  EXPECT_EQ(got.texts, (std::vector<std::string>{"first", "last"}));
  EXPECT_EQ(r.counts().malformed, 1u);
  EXPECT_EQ(r.counts().truncated, 1u);
  EXPECT_EQ(r.counts().oversized, 1u);
  EXPECT_EQ(r.counts().overruns, 0u);
  // Nothing new: nothing read again.
  Got again;
  ASSERT_TRUE(ReadAll(r, &again).ok());
  EXPECT_TRUE(again.seqs.empty());
  EXPECT_EQ(r.counts().malformed, 1u);
}

TEST(KmsgReaderTest, AppendedRecordsAndAPartialLastLine) {
  const std::string root = RootWith("6,1,100,-;one\n6,2,200,-;tw");
  KmsgReader r(root, KmsgReader::Options());
  Got got;
  ASSERT_TRUE(ReadAll(r, &got).ok());
  EXPECT_EQ(got.seqs, (std::vector<uint64_t>{1}));  // "tw" is not done yet
  Append(root, "o\n6,3,300,-;three\n");
  Got more;
  ASSERT_TRUE(ReadAll(r, &more).ok());
  EXPECT_EQ(more.seqs, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(more.texts, (std::vector<std::string>{"two", "three"}));
  EXPECT_EQ(r.counts().truncated, 0u);
}

TEST(KmsgReaderTest, AnOversizedLineAcrossChunksAndReads) {
  // 200 KiB without a newline spans several 64 KiB chunks and two Reads;
  // it is skipped, never held, and what follows it is read.
  const std::string root = RootWith("6,1,1,-;" + std::string(200 << 10, 'y'));
  KmsgReader r(root, KmsgReader::Options());
  Got got;
  ASSERT_TRUE(ReadAll(r, &got).ok());
  EXPECT_TRUE(got.seqs.empty());
  EXPECT_EQ(r.counts().oversized, 1u);
  Append(root, "yyy\n6,2,2,-;after\n");
  ASSERT_TRUE(ReadAll(r, &got).ok());
  EXPECT_EQ(got.seqs, (std::vector<uint64_t>{2}));
  EXPECT_EQ(r.counts().oversized, 1u);  // counted once
}

TEST(KmsgReaderTest, BoundedPerReadAndStopsWhenAskedTo) {
  std::string content;
  for (int i = 1; i <= 10; ++i) {
    content += absl::StrCat("6,", i, ",", i * 100, ",-;r", i, "\n");
  }
  const std::string root = RootWith(content);
  KmsgReader::Options o;
  o.max_records = 4;
  KmsgReader r(root, o);
  Got got;
  bool at_end = true;
  ASSERT_TRUE(ReadAll(r, &got, SIZE_MAX, &at_end).ok());
  EXPECT_EQ(got.seqs, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_FALSE(at_end);
  // The caller stops after two more; the next Read goes on from there.
  ASSERT_TRUE(ReadAll(r, &got, 6, &at_end).ok());
  EXPECT_EQ(got.seqs, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(at_end);
  ASSERT_TRUE(ReadAll(r, &got, SIZE_MAX, &at_end).ok());
  EXPECT_EQ(got.seqs, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_TRUE(at_end);
}

TEST(KmsgReaderTest, AReplacedFileIsReadFromItsStart) {
  const std::string root = RootWith("6,1,1,-;a\n6,2,2,-;b\n");
  KmsgReader r(root, KmsgReader::Options());
  Got got;
  ASSERT_TRUE(ReadAll(r, &got).ok());
  const std::string tmp = root + "/dev/kmsg.new";
  std::ofstream(tmp) << "6,1,1,-;a\n6,2,2,-;b\n6,3,3,-;c\n";
  ASSERT_EQ(std::rename(tmp.c_str(), (root + "/dev/kmsg").c_str()), 0);
  Got again;
  ASSERT_TRUE(ReadAll(r, &again).ok());
  EXPECT_EQ(again.seqs, (std::vector<uint64_t>{1, 2, 3}));
  // Cut shorter in place: from the start again.
  ASSERT_EQ(truncate((root + "/dev/kmsg").c_str(), 10), 0);  // "6,1,1,-;a\n"
  Got cut;
  ASSERT_TRUE(ReadAll(r, &cut).ok());
  EXPECT_EQ(cut.seqs, (std::vector<uint64_t>{1}));
}

TEST(KmsgReaderTest, NoLogIsNotFoundNamingTheHostPath) {
  KmsgReader r(TestTempDir("nokmsg"), KmsgReader::Options());
  Got got;
  absl::Status st = ReadAll(r, &got);
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_EQ(st.message(), "/dev/kmsg: No such file or directory");
}

// The live kernel log, when this process may read it.
TEST(KmsgReaderTest, TheLiveDevice) {
  if (access("/dev/kmsg", R_OK) != 0) {
    GTEST_SKIP() << "/dev/kmsg is not readable here";
  }
  KmsgReader r("/", KmsgReader::Options());
  Got got;
  absl::Status st = ReadAll(r, &got);
  if (absl::IsPermissionDenied(st)) GTEST_SKIP() << st;
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_TRUE(r.is_device());
  ASSERT_FALSE(got.seqs.empty());
  for (size_t i = 1; i < got.seqs.size(); ++i) {
    EXPECT_LT(got.seqs[i - 1], got.seqs[i]);
  }
  EXPECT_EQ(r.counts().malformed + r.counts().truncated, 0u);
  // A record logged now is the next Read's, and only it (or what else the
  // kernel logged meanwhile).
  int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "cannot write a marker to /dev/kmsg";
  const std::string marker =
      absl::StrCat("tracehealth kmsg_reader_test marker ", getpid(), " ",
                   absl::ToUnixNanos(absl::Now()));
  // With its newline: a record without one stays open for a continuation
  // and readers do not see it yet.
  const std::string line = marker + "\n";
  ASSERT_EQ(write(fd, line.data(), line.size()),
            static_cast<ssize_t>(line.size()));
  close(fd);
  Got next;
  ASSERT_TRUE(ReadAll(r, &next).ok());
  ASSERT_FALSE(next.seqs.empty());
  EXPECT_GT(next.seqs.front(), got.seqs.back());
  bool seen = false;
  for (const std::string& t : next.texts) seen = seen || t == marker;
  EXPECT_TRUE(seen) << marker;
}

}  // namespace
}  // namespace tracehealth::agent
