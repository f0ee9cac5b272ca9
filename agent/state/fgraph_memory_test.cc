#include "agent/state/fgraph_memory.h"

#include "agent/state/state_file.h"
#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);

BootIdentity Boot(const char* id) { return BootIdentity{id, 1795984241}; }

TEST(FgraphMemoryTest, NeverActiveMeansAllThreads) {
  FgraphMemory m(TestTempDir("fg"));
  ASSERT_TRUE(m.Load().ok());
  absl::Status err;
  auto b = m.Observe(Boot("b1"), false, kT0, 240000, 5000000, &err);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->bound, 240000u);
  EXPECT_EQ(b->basis, "never seen active since boot");
}

TEST(FgraphMemoryTest, ActiveNowIsZeroThenForkDeltaPersisted) {
  std::string dir = TestTempDir("fg");
  {
    FgraphMemory m(dir);
    absl::Status err;
    auto b = m.Observe(Boot("b1"), true, kT0, 1000, 50000, &err);
    ASSERT_TRUE(err.ok()) << err;
    EXPECT_EQ(b->bound, 0u);
  }
  FgraphMemory m(dir);  // a restarted agent
  ASSERT_TRUE(m.Load().ok());
  absl::Status err;
  auto b =
      m.Observe(Boot("b1"), false, kT0 + absl::Minutes(5), 1000, 50300, &err);
  EXPECT_EQ(b->bound, 300u);
  EXPECT_NE(b->basis.find("fork delta"), std::string::npos);
  // The bound never exceeds the thread count.
  b = m.Observe(Boot("b1"), false, kT0 + absl::Minutes(9), 1000, 90000, &err);
  EXPECT_EQ(b->bound, 1000u);
}

TEST(FgraphMemoryTest, RecordFromPreviousBootIsStale) {
  std::string dir = TestTempDir("fg");
  absl::Status err;
  FgraphMemory(dir).Observe(Boot("b1"), true, kT0, 1000, 50000, &err);
  FgraphMemory m(dir);
  ASSERT_TRUE(m.Load().ok());
  auto b = m.Observe(Boot("b2"), false, kT0 + absl::Hours(1), 800, 900, &err);
  EXPECT_EQ(b->bound, 800u);
  EXPECT_EQ(b->basis, "never seen active since boot");
}

TEST(FgraphMemoryTest, UnknownActivityAndInputs) {
  FgraphMemory m("");
  absl::Status err;
  auto b = m.Observe(Boot("b1"), std::nullopt, kT0, 10, 20, &err);
  EXPECT_EQ(b->bound, 10u);
  EXPECT_NE(b->basis.find("partly unknown"), std::string::npos);
  EXPECT_FALSE(
      m.Observe(Boot("b1"), false, kT0, std::nullopt, 20, &err).has_value());
}

TEST(FgraphMemoryTest, CorruptRecordIsReported) {
  std::string dir = TestTempDir("fg");
  ASSERT_TRUE(WriteFileAtomically(dir + "/fgraph_last_active", "x\n").ok());
  FgraphMemory m(dir);
  EXPECT_FALSE(m.Load().ok());
  absl::Status err;
  EXPECT_EQ(m.Observe(Boot("b1"), false, kT0, 5, 6, &err)->bound, 5u);
}

TEST(BoundNullThreadsTest, FromOneMomentWithoutTheRecordFile) {
  const absl::Time at = absl::FromUnixSeconds(1800000000);
  // Active now: nothing is NULL, whatever else is known.
  EXPECT_EQ(BoundNullThreads(true, std::nullopt, std::nullopt, std::nullopt,
                             std::nullopt)
                ->bound,
            0u);
  // Last active at 1,000 forks, 1,250 now: at most 250 of 5,000 threads.
  std::optional<NullBound> b = BoundNullThreads(false, 5000, 1250, at, 1000);
  EXPECT_EQ(b->bound, 250u);
  EXPECT_EQ(b->basis,
            "fork delta since fgraph last active at 2027-01-15T08:00:00+00:00");
  // More forks than threads: the thread count bounds it.
  EXPECT_EQ(BoundNullThreads(false, 200, 1250, at, 1000)->bound, 200u);
  // Activity unknown: computed as inactive, and said so.
  EXPECT_EQ(BoundNullThreads(std::nullopt, 5000, 1250, at, 1000)->basis,
            "fork delta since fgraph last active at 2027-01-15T08:00:00+00:00 "
            "(fgraph activity partly unknown)");
  // No record, or a fork counter below it (it cannot go back in one boot):
  // every thread.
  b = BoundNullThreads(false, 5000, 1250, std::nullopt, std::nullopt);
  EXPECT_EQ(b->bound, 5000u);
  EXPECT_EQ(b->basis, "never seen active since boot");
  EXPECT_EQ(BoundNullThreads(false, 5000, 999, at, 1000)->bound, 5000u);
  // Not active and no thread count: no bound.
  EXPECT_FALSE(BoundNullThreads(false, std::nullopt, 1250, at, 1000));
}

// Boot ids decide when both sides have one; otherwise btimes within 2 s
// are the same boot (the kernel rounds it), 3 s apart are not.
TEST(BootIdentityTest, SameBoot) {
  EXPECT_TRUE(BootIdentity({"a", 100}).Same(BootIdentity{"a", 900}));
  EXPECT_FALSE(BootIdentity({"a", 100}).Same(BootIdentity{"b", 100}));
  EXPECT_TRUE(BootIdentity({"", 100}).Same(BootIdentity{"b", 102}));
  EXPECT_TRUE(BootIdentity({"a", 102}).Same(BootIdentity{"", 100}));
  EXPECT_FALSE(BootIdentity({"", 100}).Same(BootIdentity{"", 103}));
  EXPECT_FALSE(BootIdentity({"", 103}).Same(BootIdentity{"", 100}));
  EXPECT_FALSE(BootIdentity({"", std::nullopt}).Same(BootIdentity{"", 100}));
  EXPECT_FALSE(BootIdentity{}.Same(BootIdentity{}));
}

}  // namespace
}  // namespace tracehealth::agent
