#include "server/data_dir_lock.h"

#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

TEST(DataDirLockTest, SecondHolderIsRefusedWithTheFirstsPid) {
  const std::string dir = testing::NewTempDir("lock");
  auto first = DataDirLock::Acquire(dir);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->path(), dir + "/tracehealth.lock");
  auto content = testing::ReadFile(dir + "/tracehealth.lock");
  ASSERT_TRUE(content.ok());
  EXPECT_EQ(*content, absl::StrCat(getpid(), "\n"));
  // flock conflicts between two open files, in one process too.
  auto second = DataDirLock::Acquire(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(),
                                absl::StrCat("(pid ", getpid(), ",")))
      << second.status();
  // Released with the first: a new holder takes it.
  first->reset();
  auto third = DataDirLock::Acquire(dir);
  EXPECT_TRUE(third.ok()) << third.status();
}

TEST(DataDirLockTest, MissingOrWrongDirectoryIsNamed) {
  const std::string dir = testing::NewTempDir("lock");
  auto missing = DataDirLock::Acquire(dir + "/nope");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_EQ(missing.status().message(),
            absl::StrCat("data directory ", dir, "/nope does not exist"));
  ASSERT_TRUE(testing::WriteFile(dir + "/file", "x").ok());
  auto file = DataDirLock::Acquire(dir + "/file");
  EXPECT_TRUE(absl::IsFailedPrecondition(file.status())) << file.status();
  EXPECT_TRUE(absl::StrContains(file.status().message(), "not a directory"));
}

}  // namespace
}  // namespace tracehealth::server
