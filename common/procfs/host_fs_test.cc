#include "common/procfs/host_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracehealth {
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

TEST(HostFsTest, CostInputHidesNumbers) {
  EXPECT_EQ(CostInput("/proc/812/fdinfo/3"), "/proc/*/fdinfo/*");
  EXPECT_EQ(CostInput("/proc/1/mounts"), "/proc/*/mounts");
  EXPECT_EQ(CostInput("/proc/vmallocinfo"), "/proc/vmallocinfo");
  // Only whole components: a release or a name with digits stays.
  EXPECT_EQ(CostInput("/boot/config-6.1.0-28-amd64"),
            "/boot/config-6.1.0-28-amd64");
  EXPECT_EQ(CostInput("/sys/devices/system/cpu/cpu12"),
            "/sys/devices/system/cpu/cpu12");
}

// Every system call is charged to its input; TakeCosts() empties the
// ledger.
TEST(HostFsTest, ChargesEverySyscallToItsInput) {
  std::string root = MakeTree();
  ASSERT_EQ(symlink("anon_inode:bpf_link", (root + "/proc/link").c_str()), 0);
  mkdir((root + "/proc/77").c_str(), 0755);
  std::ofstream(root + "/proc/77/comm") << "bash\n";
  HostFs fs(root);
  ASSERT_TRUE(fs.ReadFile("/proc/loadavg", 4096).ok());
  ASSERT_TRUE(fs.ReadFile("/proc/77/comm", 4096).ok());
  ASSERT_TRUE(fs.ReadLink("/proc/link").ok());
  EXPECT_TRUE(fs.Exists("/proc/loadavg"));
  EXPECT_FALSE(fs.ReadFile("/proc/none", 4096).ok());
  InputCosts costs = fs.TakeCosts();
  ASSERT_EQ(costs.size(), 4u);
  // Sorted by input.
  EXPECT_EQ(costs[0].first, "/proc/*/comm");
  EXPECT_EQ(costs[1].first, "/proc/link");
  EXPECT_EQ(costs[2].first, "/proc/loadavg");
  EXPECT_EQ(costs[3].first, "/proc/none");
  // "bash\n": open, read (5 bytes), read (0: end of file), close.
  EXPECT_EQ(costs[0].second.opens, 1u);
  EXPECT_EQ(costs[0].second.read_calls, 2u);
  EXPECT_EQ(costs[0].second.bytes, 5u);
  EXPECT_EQ(costs[0].second.syscalls, 4u);
  // readlink alone.
  EXPECT_EQ(costs[1].second.opens, 1u);
  EXPECT_EQ(costs[1].second.read_calls, 0u);
  EXPECT_EQ(costs[1].second.syscalls, 1u);
  // The 24 bytes of loadavg (4 syscalls), then stat.
  EXPECT_EQ(costs[2].second.bytes, 24u);
  EXPECT_EQ(costs[2].second.syscalls, 5u);
  // A failed open is one syscall, nothing to close.
  EXPECT_EQ(costs[3].second.opens, 1u);
  EXPECT_EQ(costs[3].second.syscalls, 1u);
  EXPECT_TRUE(fs.TakeCosts().empty());
  // Totals survive the take: 2 + 1 + 1 opens; 4+1+5+1 syscalls.
  EXPECT_EQ(fs.total().opens, 4u);
  EXPECT_EQ(fs.total().syscalls, 11u);
}

// A large file is read in growing buffers, and the next read of the same
// input starts with a buffer that holds it whole.
TEST(HostFsTest, LargeFilesTakeFewReads) {
  std::string root = MakeTree();
  std::ofstream(root + "/proc/lines") << std::string(2999999, 'x') << "\n";
  std::ofstream(root + "/proc/blob") << std::string(100000, 'y');
  HostFs fs(root);
  uint64_t lines = 0;
  auto count = [&](absl::string_view) { ++lines; };
  ASSERT_TRUE(fs.ReadLines("/proc/lines", 1 << 30, count).ok());
  // 3,000,000 bytes in reads of 64, 128, 256, 512 KiB and 1 MiB (2,031,616
  // bytes, each filling its buffer, which then doubles), then 968,384
  // bytes into 2 MiB, then end of file: 7 reads.
  InputCosts c = fs.TakeCosts();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].second.read_calls, 7u);
  EXPECT_EQ(c[0].second.bytes, 3000000u);
  EXPECT_EQ(c[0].second.syscalls, 9u);
  // Next time the buffer is 3,000,001 bytes rounded up to 733 pages: the
  // whole file, then end of file.
  ASSERT_TRUE(fs.ReadLines("/proc/lines", 1 << 30, count).ok());
  c = fs.TakeCosts();
  EXPECT_EQ(c[0].second.read_calls, 2u);
  EXPECT_EQ(lines, 2u);

  // ReadFile: 4, 4, 8, 16, 32 KiB (65,536 bytes), then the last 34,464
  // bytes, then end of file: 7 reads; next time 25 pages hold it: 2.
  auto blob = fs.ReadFile("/proc/blob", 1 << 20);
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->size(), 100000u);
  c = fs.TakeCosts();
  EXPECT_EQ(c[0].second.read_calls, 7u);
  ASSERT_TRUE(fs.ReadFile("/proc/blob", 1 << 20).ok());
  c = fs.TakeCosts();
  EXPECT_EQ(c[0].second.read_calls, 2u);
  // The limit still holds with a large buffer.
  EXPECT_TRUE(
      absl::IsResourceExhausted(fs.ReadFile("/proc/blob", 99999).status()));
  EXPECT_TRUE(fs.ReadFile("/proc/blob", 100000).ok());
}

TEST(HostFsTest, ListDirCountsGetdents) {
  std::string root = MakeTree();
  mkdir((root + "/many").c_str(), 0755);
  for (int i = 0; i < 3000; ++i) {
    std::ofstream(absl::StrCat(root, "/many/", i)) << "";
  }
  HostFs fs(root);
  auto names = fs.ListDir("/many");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(names->size(), 3000u);
  InputCosts c = fs.TakeCosts();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].first, "/many");
  EXPECT_EQ(c[0].second.opens, 1u);
  // At least two getdents64 calls (entries, then the empty end), plus open
  // and close.
  EXPECT_GE(c[0].second.read_calls, 2u);
  EXPECT_EQ(c[0].second.syscalls, c[0].second.read_calls + 2);
  // 3,002 records of at least 24 bytes (the names "0".."2999", ".", "..").
  EXPECT_GE(c[0].second.bytes, 3002u * 24);
  // Next time one buffer takes them all.
  ASSERT_TRUE(fs.ListDir("/many").ok());
  EXPECT_EQ(fs.TakeCosts()[0].second.read_calls, 2u);
}

TEST(HostFsTest, LiveRootReadsProc) {
  HostFs fs("/");
  auto r = fs.ReadFile("/proc/loadavg", 4096);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->empty());
}

}  // namespace
}  // namespace tracehealth
