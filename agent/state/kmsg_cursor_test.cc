#include "agent/state/kmsg_cursor.h"

#include <fstream>
#include <string>

#include "agent/state/state_file.h"
#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

BootIdentity Boot(const std::string& id, int64_t btime) {
  BootIdentity b;
  b.boot_id = id;
  b.btime = btime;
  return b;
}

TEST(KmsgCursorTest, SurvivesARestartWithinTheBoot) {
  const std::string dir = TestTempDir("cursor");
  const BootIdentity boot = Boot("6f0b7c1e-2d4a-4e59-9a51-0c8d2f1e7a10", 1000);
  {
    KmsgCursor c(dir);
    ASSERT_TRUE(c.Load().ok());
    EXPECT_FALSE(c.After(boot).has_value());  // nothing yet
    ASSERT_TRUE(c.Save(boot, 8021).ok());
    EXPECT_EQ(c.After(boot), 8021u);
  }
  KmsgCursor again(dir);
  ASSERT_TRUE(again.Load().ok());
  EXPECT_EQ(again.After(boot), 8021u);
  auto kv = ReadKeyValueFile(dir + "/kmsg_cursor");
  ASSERT_TRUE(kv.ok() && kv->has_value());
  EXPECT_EQ((**kv)["seq"], "8021");
  EXPECT_EQ((**kv)["boot_id"], "6f0b7c1e-2d4a-4e59-9a51-0c8d2f1e7a10");
  EXPECT_EQ((**kv)["btime"], "1000");
}

TEST(KmsgCursorTest, AnotherBootStartsFromTheBeginning) {
  const std::string dir = TestTempDir("cursor");
  KmsgCursor c(dir);
  ASSERT_TRUE(c.Save(Boot("a", 1000), 50).ok());
  EXPECT_FALSE(c.After(Boot("b", 1000)).has_value());
  // Without boot ids, btime decides (within 2 s).
  KmsgCursor no_id(TestTempDir("cursor"));
  ASSERT_TRUE(no_id.Save(Boot("", 1000), 7).ok());
  EXPECT_EQ(no_id.After(Boot("", 1002)), 7u);
  EXPECT_FALSE(no_id.After(Boot("", 1003)).has_value());
  EXPECT_FALSE(no_id.After(BootIdentity()).has_value());
}

TEST(KmsgCursorTest, ACorruptFileIsDroppedWithAnError) {
  const std::string dir = TestTempDir("cursor");
  std::ofstream(dir + "/kmsg_cursor") << "boot_id=a\nseq=twelve\n";
  KmsgCursor c(dir);
  absl::Status st = c.Load();
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_FALSE(c.After(Boot("a", 0)).has_value());
}

TEST(KmsgCursorTest, WithoutAStateDirectoryItIsKeptInMemory) {
  KmsgCursor c("");
  ASSERT_TRUE(c.Load().ok());
  ASSERT_TRUE(c.Save(Boot("a", 1), 3).ok());
  EXPECT_EQ(c.After(Boot("a", 1)), 3u);
}

}  // namespace
}  // namespace tracehealth::agent
