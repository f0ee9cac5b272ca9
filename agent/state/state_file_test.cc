#include "agent/state/state_file.h"

#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(StateFileTest, WritesAtomicallyAndReadsBack) {
  std::string dir = TestTempDir("state") + "/a/b";
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/f", "one").ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/f", "two").ok());
  EXPECT_EQ(*ReadWholeFile(dir + "/f"), "two");
  EXPECT_TRUE(absl::IsNotFound(ReadWholeFile(dir + "/f.tmp").status()));
  EXPECT_TRUE(absl::IsNotFound(ReadWholeFile(dir + "/missing").status()));
}

TEST(StateFileTest, MakeDirsRefusesFile) {
  std::string dir = TestTempDir("state");
  ASSERT_TRUE(WriteFileAtomically(dir + "/file", "x").ok());
  EXPECT_FALSE(MakeDirs(dir + "/file").ok());
}

TEST(StateFileTest, KeyValuesRoundTripAndRejectGarbage) {
  std::map<std::string, std::string> kv = {{"host_id", "web-1"},
                                           {"reserved", "65"}};
  auto back = ParseKeyValues(FormatKeyValues(kv));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, kv);
  EXPECT_FALSE(ParseKeyValues("no equals sign\n").ok());
  EXPECT_FALSE(ParseKeyValues("=value\n").ok());
  EXPECT_FALSE(ParseKeyValues("Bad-Key=1\n").ok());
}

}  // namespace
}  // namespace tracehealth::agent
