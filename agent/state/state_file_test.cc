#include "agent/state/state_file.h"

#include <utility>

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
  const std::pair<const char*, const char*> bad[] = {
      {"no equals sign\n", "state file: malformed line 'no equals sign'"},
      {"a=1\n=value\n", "state file: malformed line '=value'"},
      {"Bad-Key=1\n", "state file: bad key 'Bad-Key'"},
  };
  for (const auto& [text, message] : bad) {
    auto r = ParseKeyValues(text);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(r.status().message(), message) << text;
  }
  // A later line for a key wins; a value may be empty or hold '='.
  auto last = ParseKeyValues("seq=1\nseq=2\nnote=\nexpr=a=b\n");
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->at("seq"), "2");
  EXPECT_EQ(last->at("note"), "");
  EXPECT_EQ(last->at("expr"), "a=b");
}

}  // namespace
}  // namespace tracehealth::agent
