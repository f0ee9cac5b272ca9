#include "agent/parsers/kernel_version.h"

#include <optional>
#include <string>
#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

// Debian 12's /proc/version: the compiler's "(Debian 12.2.0-14)" comes
// before the version string's "Debian 6.1.119-1".
constexpr char kDebian[] =
    "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) (gcc-12 "
    "(Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP "
    "PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)\n";

TEST(KernelVersionTest, DebianTakesTheLastMatch) {
  std::optional<UpstreamVersion> v = DebianUpstreamVersion(kDebian);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->version, "6.1.119");
  EXPECT_EQ(v->evidence, "Debian 6.1.119-1");
  // uname -v alone, and a backports kernel.
  v = DebianUpstreamVersion(
      "#1 SMP PREEMPT_DYNAMIC Debian 6.12.9-1~bpo12+1 "
      "(2025-01-19)");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->version, "6.12.9");
  // No "Debian X.Y" at all: nothing.
  EXPECT_FALSE(DebianUpstreamVersion("#1 SMP PREEMPT_DYNAMIC Thu Jan 1\n"));
  EXPECT_FALSE(DebianUpstreamVersion("Debian banana"));
  EXPECT_FALSE(DebianUpstreamVersion(""));
}

TEST(KernelVersionTest, UbuntuSignature) {
  absl::StatusOr<UpstreamVersion> v =
      ParseVersionSignature("Ubuntu 6.8.0-45.45-generic 6.8.12\n");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->version, "6.8.12");
  EXPECT_EQ(v->evidence, "Ubuntu 6.8.0-45.45-generic 6.8.12");
  // An HWE kernel on 24.04.
  v = ParseVersionSignature("Ubuntu 6.14.0-1012.12~24.04.1-aws 6.14.8");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->version, "6.14.8");
  const std::pair<const char*, const char*> bad[] = {
      {"Ubuntu",
       "version_signature: expected 'NAME RELEASE UPSTREAM', got 'Ubuntu'"},
      {"", "version_signature: expected 'NAME RELEASE UPSTREAM', got ''"},
      {"Ubuntu 6.8.0-45 6.8.12-x",
       "version_signature: '6.8.12-x' is not an upstream release"},
      {"Ubuntu 6.8.0-45 banana",
       "version_signature: 'banana' is not an upstream release"},
  };
  for (const auto& [text, message] : bad) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseVersionSignature(text).status(), message);
  }
}

}  // namespace
}  // namespace tracehealth::agent
