#include "agent/collect/host_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

std::string MakeTree() {
  std::string base = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR")
                                                : std::string("/tmp");
  std::string tmpl = base + "/hostfsXXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  std::string root = mkdtemp(buf.data());
  mkdir((root + "/proc").c_str(), 0755);
  mkdir((root + "/proc/sys").c_str(), 0755);
  std::ofstream(root + "/proc/loadavg") << "0.00 0.01 0.05 1/100 42\n";
  std::ofstream(root + "/proc/sys/lines") << "a\nbb\n\nccc";
  std::ofstream(root + "/secret") << "outside proc";
  return root;
}

TEST(HostFsTest, ReadsUnderRoot) {
  std::string root = MakeTree();
  HostFs fs(root + "/");
  EXPECT_EQ(fs.root(), root);
  auto r = fs.ReadFile("/proc/loadavg", 4096);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "0.00 0.01 0.05 1/100 42\n");
  EXPECT_TRUE(fs.Exists("/proc/loadavg"));
  EXPECT_FALSE(fs.Exists("/proc/nothing"));
  EXPECT_EQ(fs.opens(), 1u);
}

TEST(HostFsTest, MissingFileIsNotFoundNamingPath) {
  HostFs fs(MakeTree());
  auto r = fs.ReadFile("/proc/config.gz", 4096);
  ASSERT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("/proc/config.gz"), std::string::npos);
  EXPECT_EQ(fs.opens(), 1u);
}

TEST(HostFsTest, RefusesEscapingAndRelativePaths) {
  std::string root = MakeTree();
  HostFs fs(root + "/proc");
  for (const char* bad :
       {"../secret", "/../secret", "/sys/../../secret", "secret", ""}) {
    auto r = fs.ReadFile(bad, 4096);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status()))
        << bad << " " << r.status();
    EXPECT_FALSE(fs.Exists(bad)) << bad;
  }
  EXPECT_FALSE(fs.ListDir("/..").ok());
}

TEST(HostFsTest, SizeLimit) {
  HostFs fs(MakeTree());
  auto r = fs.ReadFile("/proc/loadavg", 5);
  EXPECT_TRUE(absl::IsResourceExhausted(r.status())) << r.status();
}

TEST(HostFsTest, ReadLinesStreamsEveryLine) {
  HostFs fs(MakeTree());
  std::vector<std::string> lines;
  auto n = fs.ReadLines("/proc/sys/lines", 1024,
                        [&](absl::string_view l) { lines.emplace_back(l); });
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 4u);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "bb", "", "ccc"}));
  EXPECT_FALSE(
      fs.ReadLines("/proc/sys/lines", 3, [](absl::string_view) {}).ok());
}

TEST(HostFsTest, ReadLinesAcrossChunkBoundaries) {
  std::string root = MakeTree();
  std::string big;
  for (int i = 0; i < 50000; ++i) absl::StrAppend(&big, "line", i, "\n");
  std::ofstream(root + "/proc/big") << big;
  HostFs fs(root);
  uint64_t count = 0;
  bool ok = true;
  auto n = fs.ReadLines("/proc/big", 1 << 30, [&](absl::string_view l) {
    ok = ok && l == absl::StrCat("line", count);
    ++count;
  });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 50000u);
  EXPECT_TRUE(ok);
}

TEST(HostFsTest, ListDirAndCountsOpens) {
  HostFs fs(MakeTree());
  auto names = fs.ListDir("/proc");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 2u);
  EXPECT_TRUE(absl::IsNotFound(fs.ListDir("/nope").status()));
  EXPECT_TRUE(absl::IsResourceExhausted(fs.ListDir("/proc", 1).status()));
  EXPECT_EQ(fs.opens(), 3u);
}

TEST(HostFsTest, ReadLink) {
  std::string root = MakeTree();
  ASSERT_EQ(symlink("anon_inode:bpf_link", (root + "/proc/link").c_str()), 0);
  HostFs fs(root);
  auto t = fs.ReadLink("/proc/link");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "anon_inode:bpf_link");
  EXPECT_FALSE(fs.ReadLink("/proc/loadavg").ok());  // not a symlink
  EXPECT_TRUE(absl::IsNotFound(fs.ReadLink("/proc/none").status()));
  EXPECT_EQ(fs.opens(), 3u);
}

TEST(HostFsTest, LiveRootReadsProc) {
  HostFs fs("/");
  auto r = fs.ReadFile("/proc/loadavg", 4096);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->empty());
}

}  // namespace
}  // namespace tracehealth::agent
