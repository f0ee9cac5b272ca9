#include "common/flag_help.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, flag_help_test_count, 3, "How many (a test flag).");
ABSL_FLAG(std::string, flag_help_test_name, "", "A name (a test flag).");

namespace tracehealth {
namespace {

TEST(FlagHelpTest, WantsHelpBeforeTheDashes) {
  auto wants = [](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    return WantsHelp(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_TRUE(wants({"prog", "--help"}));
  EXPECT_TRUE(wants({"prog", "predict", "-h"}));
  EXPECT_TRUE(wants({"prog", "-help"}));
  EXPECT_TRUE(wants({"prog", "--help=true"}));
  EXPECT_FALSE(wants({"prog"}));
  EXPECT_FALSE(wants({"prog", "--helpfull"}));
  EXPECT_FALSE(wants({"prog", "--", "--help"}));
  EXPECT_FALSE(wants({"prog", "--helpx"}));
}

TEST(FlagHelpTest, WithoutHelpKeepsEverythingElse) {
  std::vector<std::string> args = {"prog",  "--help", "predict",
                                   "--x=1", "--",     "-h"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::vector<char*> rest =
      WithoutHelp(static_cast<int>(argv.size()), argv.data());
  std::vector<std::string> got(rest.begin(), rest.end());
  EXPECT_EQ(got,
            (std::vector<std::string>{"prog", "predict", "--x=1", "--", "-h"}));
}

TEST(FlagHelpTest, ListsTheFlagsOfTheNamedFiles) {
  const std::string help =
      FlagHelp("usage: prog", {"common/flag_help_test.cc"});
  EXPECT_EQ(help,
            "usage: prog\n\nFlags:\n"
            "  --flag_help_test_count=3\n      How many (a test flag).\n"
            "  --flag_help_test_name\n      A name (a test flag).\n"
            "\n--helpfull lists the flags of every library as well.\n");
  EXPECT_EQ(FlagEntries({"flag_help_test_name", "no_such_flag",
                         "flag_help_test_count"}),
            "  --flag_help_test_name\n      A name (a test flag).\n"
            "  --flag_help_test_count=3\n      How many (a test flag).\n");
}

}  // namespace
}  // namespace tracehealth
