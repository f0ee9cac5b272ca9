#include "agent/calibrate/journal.h"

#include <filesystem>
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

v1::CalibrationJournal Journal(const std::string& filter) {
  v1::CalibrationJournal j;
  j.set_pid(4242);
  j.set_tracefs("/sys/kernel/tracing");
  j.set_current_tracer("nop\n");
  j.set_ftrace_filter(filter);
  return j;
}

TEST(JournalTest, FilterToRestore) {
  EXPECT_EQ(FilterToRestore("#### all functions enabled ####\n"), "");
  EXPECT_EQ(FilterToRestore("vfs_read\nvfs_write\n"), "vfs_read\nvfs_write\n");
  EXPECT_EQ(
      FilterToRestore("vfs_read [ext4]\n\n# comment\nschedule:traceoff\n"),
      "vfs_read [ext4]\nschedule:traceoff\n");
}

TEST(JournalTest, WriteReadRemove) {
  TestTree t;
  EXPECT_FALSE(ReadJournal(t.root())->has_value());
  ASSERT_TRUE(WriteJournal(t.root(), Journal("vfs_read\n")).ok());
  absl::StatusOr<std::optional<v1::CalibrationJournal>> j =
      ReadJournal(t.root());
  ASSERT_TRUE(j.ok() && j->has_value()) << j.status();
  EXPECT_EQ((*j)->pid(), 4242);
  EXPECT_EQ((*j)->ftrace_filter(), "vfs_read\n");
  ASSERT_TRUE(RemoveJournal(t.root()).ok());
  EXPECT_FALSE(std::filesystem::exists(JournalPath(t.root())));
  EXPECT_TRUE(RemoveJournal(t.root()).ok());  // none: fine
  t.Write("/calibration.journal", "{not json");
  EXPECT_EQ(ReadJournal(t.root()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JournalTest, RecoversAnInterruptedCalibration) {
  TestTree host, state;
  host.Write("/sys/kernel/tracing/current_tracer", "function_graph\n");
  host.Write("/sys/kernel/tracing/set_ftrace_filter", "ksys_sync\n");
  // Nothing to do without a journal: tracefs is left alone.
  absl::StatusOr<std::string> r =
      RecoverInterruptedCalibration(host.root(), state.root());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "");
  EXPECT_EQ(Slurp(host.root() + "/sys/kernel/tracing/current_tracer"),
            "function_graph\n");

  ASSERT_TRUE(
      WriteJournal(state.root(), Journal("vfs_read\nvfs_write\n")).ok());
  r = RecoverInterruptedCalibration(host.root(), state.root());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r,
            "restored current_tracer (nop) and set_ftrace_filter under "
            "/sys/kernel/tracing left by an interrupted calibration (pid "
            "4242)");
  EXPECT_EQ(Slurp(host.root() + "/sys/kernel/tracing/current_tracer"), "nop\n");
  EXPECT_EQ(Slurp(host.root() + "/sys/kernel/tracing/set_ftrace_filter"),
            "vfs_read\nvfs_write\n");
  EXPECT_FALSE(std::filesystem::exists(JournalPath(state.root())));
}

TEST(JournalTest, LeavesARunningCalibrationAlone) {
  TestTree host, state;
  host.Write("/sys/kernel/tracing/current_tracer", "function_graph\n");
  host.Write("/sys/kernel/tracing/set_ftrace_filter", "ksys_sync\n");
  ASSERT_TRUE(WriteJournal(state.root(), Journal("")).ok());
  absl::StatusOr<std::unique_ptr<CalibrationLock>> lock =
      CalibrationLock::TryAcquire(state.root());
  ASSERT_TRUE(lock.ok()) << lock.status();
  EXPECT_EQ(CalibrationLock::TryAcquire(state.root()).status().code(),
            absl::StatusCode::kUnavailable);
  absl::StatusOr<std::string> r =
      RecoverInterruptedCalibration(host.root(), state.root());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "");
  EXPECT_EQ(Slurp(host.root() + "/sys/kernel/tracing/current_tracer"),
            "function_graph\n");
  EXPECT_TRUE(std::filesystem::exists(JournalPath(state.root())));
  lock->reset();
  r = RecoverInterruptedCalibration(host.root(), state.root());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(*r, "");
  EXPECT_EQ(Slurp(host.root() + "/sys/kernel/tracing/set_ftrace_filter"), "");
}

TEST(JournalTest, AFailedRestoreKeepsTheJournal) {
  TestTree host, state;
  // No tracefs files: every write fails.
  ASSERT_TRUE(WriteJournal(state.root(), Journal("vfs_read\n")).ok());
  absl::StatusOr<std::string> r =
      RecoverInterruptedCalibration(host.root(), state.root());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("restoring an interrupted calibration"),
            absl::string_view::npos)
      << r.status();
  EXPECT_TRUE(std::filesystem::exists(JournalPath(state.root())));
}

}  // namespace
}  // namespace tracehealth::agent
