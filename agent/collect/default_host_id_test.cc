#include "agent/collect/default_host_id.h"

#include <unistd.h>

#include <string>

#include "agent/testing/test_tree.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

// Expected ids come from systemd: `systemd-id128 machine-id
// --app-specific=fe107386b6e54873b921257ea367a540` on a host whose
// /etc/machine-id is the given one (equivalently: HMAC-SHA256 keyed by the
// 16 machine-id bytes over the 16 app-id bytes, first 16 bytes, byte 6 =
// 0x4X, byte 8 = 0b10XXXXXX).
constexpr char kMachineId[] = "5c1f0e3a9b2d4c6e8f7a1b2c3d4e5f60";
constexpr char kDerived[] = "f8587c26b1d446a7818c4a010bcf7578";

TEST(DefaultHostIdTest, DerivedFromMachineIdAsSystemdDoes) {
  auto id = HostIdFromMachineId(std::string(kMachineId) + "\n");
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, kDerived);
  // Upper-case digits are the same id.
  EXPECT_EQ(*HostIdFromMachineId("5C1F0E3A9B2D4C6E8F7A1B2C3D4E5F60"), kDerived);
  // A second vector: systemd-id128 on a machine with this machine id.
  auto self = HostIdFromMachineId("3d1219c7c4c5404aaa1f6d2a48adfda4");
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(*self, "f66220de5ea04ed3a42762fb8064ef9a");
}

TEST(DefaultHostIdTest, MalformedMachineIds) {
  for (const char* bad :
       {"", "uninitialized\n", "5c1f0e3a9b2d4c6e8f7a1b2c3d4e5f6",
        "5c1f0e3a9b2d4c6e8f7a1b2c3d4e5f600", "5c1f0e3a-9b2d-4c6e-8f7a-1b2c3d4e",
        "5c1f0e3a9b2d4c6e8f7a1b2c3d4e5fzz"}) {
    auto id = HostIdFromMachineId(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(id.status())) << bad;
    EXPECT_EQ(id.status().message(), "not 32 hexadecimal digits") << bad;
  }
  EXPECT_EQ(HostIdFromMachineId(std::string(32, '0')).status().message(),
            "all zero");
}

TEST(DefaultHostIdTest, HostnameWhenValid) {
  TestTree t;
  t.Write("/proc/sys/kernel/hostname", "web-7\n");
  t.Write("/etc/machine-id", std::string(kMachineId) + "\n");
  HostFs fs(t.root());
  for (bool need : {false, true}) {
    auto id = ResolveDefaultHostId(fs, need);
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_EQ(id->host_id, "web-7");
    EXPECT_EQ(id->source, "hostname");
  }
}

// "(none)": shown as it is for a one-shot report; otherwise the machine id
// gives the id, or the agent is told to pass --host_id.
TEST(DefaultHostIdTest, NoneHostname) {
  TestTree t;
  t.Write("/proc/sys/kernel/hostname", "(none)\n");
  HostFs fs(t.root());
  auto once = ResolveDefaultHostId(fs, false);
  ASSERT_TRUE(once.ok());
  EXPECT_EQ(once->host_id, "(none)");

  auto absent = ResolveDefaultHostId(fs, true);
  EXPECT_TRUE(absl::IsInvalidArgument(absent.status()));
  EXPECT_EQ(absent.status().message(),
            "hostname '(none)' is no valid host id ([A-Za-z0-9._-]{1,253}, "
            "not dots only) and no id can be derived from /etc/machine-id "
            "(missing): pass --host_id=NAME");

  t.Write("/etc/machine-id", "uninitialized\n");
  auto malformed = ResolveDefaultHostId(fs, true);
  EXPECT_EQ(malformed.status().message(),
            "hostname '(none)' is no valid host id ([A-Za-z0-9._-]{1,253}, "
            "not dots only) and no id can be derived from /etc/machine-id "
            "(it is not 32 hexadecimal digits): pass --host_id=NAME");

  t.Write("/etc/machine-id", std::string(kMachineId) + "\n");
  auto derived = ResolveDefaultHostId(fs, true);
  ASSERT_TRUE(derived.ok()) << derived.status();
  EXPECT_EQ(derived->host_id, kDerived);
  EXPECT_EQ(derived->source, "/etc/machine-id");
}

TEST(DefaultHostIdTest, HostnameEscapedInTheMessage) {
  TestTree t;
  t.Write("/proc/sys/kernel/hostname", "a\tb\n");
  HostFs fs(t.root());
  EXPECT_EQ(ReadHostname(fs), "a\tb");
  auto id = ResolveDefaultHostId(fs, true);
  EXPECT_NE(id.status().message().find("hostname 'a\\tb'"), std::string::npos)
      << id.status();
}

TEST(DefaultHostIdTest, GethostnameWithoutTheFile) {
  TestTree t;
  HostFs fs(t.root());
  char buf[256] = {0};
  ASSERT_EQ(gethostname(buf, sizeof(buf) - 1), 0);
  EXPECT_EQ(ReadHostname(fs), buf);
}

}  // namespace
}  // namespace tracehealth::agent
