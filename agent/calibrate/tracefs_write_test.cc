#include "agent/calibrate/tracefs_write.h"

#include <fstream>
#include <sstream>

#include "agent/testing/test_tree.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TracefsWriteTest, ReplacesTheContent) {
  TestTree t;
  t.Write("/sys/kernel/tracing/set_ftrace_filter", "vfs_read\nvfs_write\n");
  ASSERT_TRUE(WriteTracefsFile(t.root(),
                               "/sys/kernel/tracing/set_ftrace_filter",
                               "ksys_sync\n")
                  .ok());
  EXPECT_EQ(Slurp(t.root() + "/sys/kernel/tracing/set_ftrace_filter"),
            "ksys_sync\n");
  // Nothing to write: the file is truncated (an empty filter).
  ASSERT_TRUE(WriteTracefsFile(t.root() + "/",
                               "/sys/kernel/tracing/set_ftrace_filter", "")
                  .ok());
  EXPECT_EQ(Slurp(t.root() + "/sys/kernel/tracing/set_ftrace_filter"), "");
}

TEST(TracefsWriteTest, ErrorsNameThePath) {
  TestTree t;
  absl::Status s =
      WriteTracefsFile(t.root(), "/sys/kernel/tracing/current_tracer", "nop\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("open /sys/kernel/tracing/current_tracer"),
            absl::string_view::npos)
      << s;
  s = CheckWritable(t.root(), "/sys/kernel/tracing/current_tracer");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("/sys/kernel/tracing/current_tracer"),
            absl::string_view::npos);
  t.Write("/sys/kernel/tracing/current_tracer", "nop\n");
  EXPECT_TRUE(
      CheckWritable(t.root(), "/sys/kernel/tracing/current_tracer").ok());
}

TEST(TracefsWriteTest, RefusesPathsLeavingTheRoot) {
  EXPECT_EQ(RootedPath("/r", "/a/../b").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RootedPath("/r", "a").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*RootedPath("/r/", "/sys/x"), "/r/sys/x");
  EXPECT_EQ(*RootedPath("/", "/sys/x"), "/sys/x");
}

TEST(TracefsWriteTest, ReadOnlyMount) {
  const char* mounts =
      "sysfs /sys sysfs rw,nosuid 0 0\n"
      "tracefs /sys/kernel/tracing tracefs ro,nosuid,relatime 0 0\n"
      "tracefs /sys/kernel/debug/tracing tracefs rw,relatime 0 0\n";
  EXPECT_TRUE(MountedReadOnly(mounts, "/sys/kernel/tracing"));
  EXPECT_FALSE(MountedReadOnly(mounts, "/sys/kernel/debug/tracing"));
  // "rox" is no "ro".
  EXPECT_FALSE(MountedReadOnly("t /t tracefs rox,rw 0 0\n", "/t"));
  EXPECT_FALSE(MountedReadOnly(mounts, "/elsewhere"));
}

}  // namespace
}  // namespace tracehealth::agent
