#include "agent/state/depot_history.h"

#include "agent/state/state_file.h"
#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);
BootIdentity Boot(const char* id) { return BootIdentity{id, 1795984241}; }

TEST(DepotHistoryTest, SpacedBoundedAndEndsWithCurrent) {
  DepotHistory h("", 3, absl::Minutes(5));
  absl::Status err;
  auto out = h.Observe(Boot("b"), kT0, 10, 100, &err);
  ASSERT_EQ(out.size(), 1u);
  out = h.Observe(Boot("b"), kT0 + absl::Minutes(1), 11, 110, &err);
  ASSERT_EQ(out.size(), 2u);  // one kept sample + current
  EXPECT_EQ(out[1].pools(), 11u);
  for (int i = 1; i <= 5; ++i) {
    out = h.Observe(Boot("b"), kT0 + absl::Minutes(5 * i), 10 + i, 0, &err);
  }
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.front().pools(), 13u);
  EXPECT_EQ(out.back().pools(), 15u);
  EXPECT_LT(out.front().at().seconds(), out.back().at().seconds());
}

TEST(DepotHistoryTest, SurvivesRestartButNotReboot) {
  std::string dir = TestTempDir("depot");
  absl::Status err;
  {
    DepotHistory h(dir, 64, absl::Minutes(5));
    h.Observe(Boot("b1"), kT0, 100, 1, &err);
    ASSERT_TRUE(err.ok()) << err;
    h.Observe(Boot("b1"), kT0 + absl::Minutes(5), 120, 2, &err);
  }
  {
    DepotHistory h(dir, 64, absl::Minutes(5));
    ASSERT_TRUE(h.Load().ok());
    auto out = h.Observe(Boot("b1"), kT0 + absl::Minutes(10), 140, 3, &err);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].pools(), 100u);
    EXPECT_EQ(out[2].pools(), 140u);
  }
  DepotHistory h(dir, 64, absl::Minutes(5));
  ASSERT_TRUE(h.Load().ok());
  auto out = h.Observe(Boot("b2"), kT0 + absl::Hours(2), 5, 0, &err);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].pools(), 5u);
}

TEST(DepotHistoryTest, CorruptFileIsReportedAndIgnored) {
  std::string dir = TestTempDir("depot");
  ASSERT_TRUE(WriteFileAtomically(dir + "/depot_history",
                                  "boot_id=b1\nsample_000000=x,1,2\n")
                  .ok());
  DepotHistory h(dir, 64, absl::Minutes(5));
  EXPECT_FALSE(h.Load().ok());
  absl::Status err;
  EXPECT_EQ(h.Observe(Boot("b1"), kT0, 7, 0, &err).size(), 1u);
}

}  // namespace
}  // namespace tracehealth::agent
