#include "agent/parsers/cpu.h"

#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(CpuListTest, CountsRanges) {
  EXPECT_EQ(*ParseCpuListCount("0\n"), 1u);
  EXPECT_EQ(*ParseCpuListCount("0-1\n"), 2u);
  EXPECT_EQ(*ParseCpuListCount("0-3,8-11"), 8u);
  EXPECT_EQ(*ParseCpuListCount("0-255\n"), 256u);
  EXPECT_EQ(*ParseCpuListCount("0,2,4-5"), 4u);
}

TEST(CpuListTest, RejectsMalformed) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "cpu list: empty"},
      {"\n", "cpu list: empty"},
      {"a", "cpu list: malformed range 'a'"},
      {"3-1", "cpu list: reversed range '3-1'"},
      {"0-", "cpu list: malformed range '0-'"},
      {"-3", "cpu list: malformed range '-3'"},
      {"0,,1", "cpu list: malformed range ''"},
      {"0-3,2", "cpu list: range '2' overlaps or is unordered"},
      // A range starting where the last one ended counts that CPU twice.
      {"0-3,3-5", "cpu list: range '3-5' overlaps or is unordered"},
      {"4,2", "cpu list: range '2' overlaps or is unordered"},
      {"+1", "cpu list: malformed range '+1'"},
      {"0-4294967295", "cpu list: implausibly many CPUs"},
      {"1 2", "cpu list: malformed range '1 2'"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseCpuListCount(text).status(), message);
  }
}

// The next range may start right after the last one ended; 2^20 CPUs is
// the most accepted, one more is not.
TEST(CpuListTest, Boundaries) {
  EXPECT_EQ(*ParseCpuListCount("0-3,4-5"), 6u);
  EXPECT_EQ(*ParseCpuListCount(" 7 \n"), 1u);  // trimmed
  EXPECT_EQ(*ParseCpuListCount("0-1048575"), 1048576u);
  EXPECT_EQ(ParseCpuListCount("0-1048576").status().message(),
            "cpu list: implausibly many CPUs");
}

TEST(CpuInfoTest, ReadsFlagsAndModel) {
  auto r = ParseCpuInfo(
      "processor\t: 0\n"
      "vendor_id\t: AuthenticAMD\n"
      "model name\t: AMD EPYC 9654 96-Core Processor\n"
      "flags\t\t: fpu vme de pse tsc invlpgb rdpru\n"
      "\n"
      "processor\t: 1\n"
      "model name\t: AMD EPYC 9654 96-Core Processor\n"
      "flags\t\t: fpu vme\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->invlpgb);
  EXPECT_FALSE(r->hypervisor);
  EXPECT_EQ(*r->model_name, "AMD EPYC 9654 96-Core Processor");
}

TEST(CpuInfoTest, HypervisorFlagOfAGuest) {
  // A QEMU TCG guest: x86 sets X86_FEATURE_HYPERVISOR ("hypervisor").
  auto r = ParseCpuInfo(
      "processor\t: 0\nmodel name\t: QEMU TCG CPU version 2.5+\n"
      "flags\t\t: fpu de pse tsc msr pae mce cx8 apic sep pge cmov "
      "hypervisor lahf_lm\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->hypervisor);
  EXPECT_EQ(*r->model_name, "QEMU TCG CPU version 2.5+");
  // A flag that only starts alike is not it.
  r = ParseCpuInfo("processor\t: 0\nflags\t\t: fpu hypervisorx\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->hypervisor);
}

TEST(CpuInfoTest, NoInvlpgb) {
  auto r = ParseCpuInfo(
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R)\nflags\t\t: fpu "
      "invlpgbx pge\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->invlpgb);
}

TEST(CpuInfoTest, RejectsWithoutFlags) {
  for (const char* text : {"processor\t: 0\nmodel name\t: X\n", ""}) {
    auto r = ParseCpuInfo(text);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(r.status().message(), "/proc/cpuinfo: no flags line") << text;
  }
}

// The first CPU's model name and flags (arm64: "Features") are taken, the
// values trimmed.
TEST(CpuInfoTest, FirstCpuWinsAndValuesAreTrimmed) {
  auto r = ParseCpuInfo(
      "processor\t: 0\nmodel name\t:   First CPU  \nflags\t\t: fpu\n\n"
      "processor\t: 1\nmodel name\t: Second CPU\n"
      "flags\t\t: fpu invlpgb hypervisor\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->model_name, "First CPU");
  EXPECT_FALSE(r->invlpgb);
  EXPECT_FALSE(r->hypervisor);
  r = ParseCpuInfo("processor\t: 0\nFeatures\t: fp asimd evtstrm\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->model_name.has_value());
  EXPECT_FALSE(r->invlpgb);
}

}  // namespace
}  // namespace tracehealth::agent
