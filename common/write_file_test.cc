#include "common/write_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/read_file.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

std::string TempDir(const std::string& name) {
  const char* base = getenv("TEST_TMPDIR");
  std::string dir = std::string(base != nullptr ? base : "/tmp") + "/" + name;
  mkdir(dir.c_str(), 0700);
  return dir;
}

TEST(WriteFileAtomicallyTest, ReplacesWholeAndLeavesNoTemporary) {
  for (bool durable : {true, false}) {
    SCOPED_TRACE(durable);
    const std::string dir = TempDir(durable ? "durable" : "not_durable");
    ASSERT_TRUE(WriteFileAtomically(dir + "/f", "one two", durable).ok());
    ASSERT_TRUE(WriteFileAtomically(dir + "/f", "3", durable).ok());
    EXPECT_EQ(*ReadWholeFile(dir + "/f"), "3");
    EXPECT_TRUE(absl::IsNotFound(ReadWholeFile(dir + "/f.tmp").status()));
    struct stat st;
    ASSERT_EQ(stat((dir + "/f").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600);
  }
}

TEST(WriteFileAtomicallyTest, MissingDirectoryIsNotFoundNamingTheFile) {
  const std::string path = TempDir("missing") + "/no/such/f";
  absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(path + ".tmp"), absl::string_view::npos) << s;
}

TEST(WriteFileAtomicallyTest, RenameOntoADirectoryFailsAndRemovesTheTemporary) {
  const std::string dir = TempDir("onto_dir");
  ASSERT_EQ(mkdir((dir + "/d").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((dir + "/d/x").c_str(), 0700), 0);  // not empty
  absl::Status s = WriteFileAtomically(dir + "/d", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir + "/d"), absl::string_view::npos) << s;
  EXPECT_TRUE(absl::IsNotFound(ReadWholeFile(dir + "/d.tmp").status()));
}

}  // namespace
}  // namespace tracehealth
