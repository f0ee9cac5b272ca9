#include "agent/parsers/cpu.h"

#include <string>
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

TEST(CpuInfoTest, IbtFlag) {
  // A Sapphire Rapids host whose kernel keeps Indirect Branch Tracking on.
  auto r = ParseCpuInfo(
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu ibt amx_tile\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ibt);
  EXPECT_FALSE(r->hypervisor);
  for (const char* text : {"processor\t: 0\nflags\t\t: fpu ibtx ibpb\n",
                           "processor\t: 0\nflags\t\t: fpu\n"}) {
    r = ParseCpuInfo(text);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->ibt) << text;
  }
  // An arm64 Features line has no such flag; BTI is its own hwcap.
  r = ParseCpuInfo("processor\t: 0\nFeatures\t: fp asimd bti ibt\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->flags_line, CpuInfoFacts::FlagsLine::kFeatures);
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

// arm64's /proc/cpuinfo (arch/arm64/kernel/cpuinfo.c c_show()) on an AWS
// Graviton4 (Neoverse-V2 r0p1): no model name, hwcaps on the Features line,
// and the MIDR fields: 0x41 << 24 | 0 << 20 | 0xf << 16 | 0xd4f << 4 | 1.
constexpr char kGraviton4[] =
    "processor\t: 0\n"
    "BogoMIPS\t: 2000.00\n"
    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp "
    "asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp "
    "sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp sve2 "
    "sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 "
    "i8mm bf16 dgh rng bti\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x0\n"
    "CPU part\t: 0xd4f\n"
    "CPU revision\t: 1\n"
    "\n"
    "processor\t: 1\n"
    "BogoMIPS\t: 2000.00\n"
    "Features\t: fp asimd\n"
    "CPU implementer\t: 0x41\n"
    "CPU architecture: 8\n"
    "CPU variant\t: 0x0\n"
    "CPU part\t: 0xd4f\n"
    "CPU revision\t: 1\n"
    "\n";

TEST(CpuInfoTest, Arm64MidrFields) {
  auto r = ParseCpuInfo(kGraviton4);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->flags_line, CpuInfoFacts::FlagsLine::kFeatures);
  EXPECT_FALSE(r->model_name.has_value());
  EXPECT_FALSE(r->invlpgb);
  EXPECT_FALSE(r->hypervisor);
  ASSERT_TRUE(r->midr.has_value()) << r->midr_error;
  EXPECT_EQ(*r->midr, 0x410fd4f1u);
  EXPECT_EQ(r->midr_error, "");
  // Ampere Altra, Neoverse-N1 r3p1: 0x413fd0c1.
  r = ParseCpuInfo(
      "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes "
      "pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop "
      "asimddp ssbs\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
      "CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->midr, 0x413fd0c1u);
  // x86 has none of the lines: no MIDR, and no error.
  r = ParseCpuInfo("processor\t: 0\nmodel name\t: X\nflags\t\t: fpu\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->flags_line, CpuInfoFacts::FlagsLine::kFlags);
  EXPECT_FALSE(r->midr.has_value());
  EXPECT_EQ(r->midr_error, "");
}

// What a 32-bit reader sees on an arm64 kernel: a model name that only
// says ARMv8, before the Features line; the MIDR lines are still read.
TEST(CpuInfoTest, Arm64CompatModelNameDoesNotStopTheMidr) {
  auto r = ParseCpuInfo(
      "processor\t: 0\nmodel name\t: ARMv8 Processor rev 1 (v8l)\n"
      "BogoMIPS\t: 50.00\nFeatures\t: half thumb fastmult vfp edsp neon\n"
      "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
      "CPU part\t: 0xd0c\nCPU revision\t: 1\n\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r->model_name, "ARMv8 Processor rev 1 (v8l)");
  EXPECT_EQ(*r->midr, 0x413fd0c1u);
}

// The widest values each field takes, and the first processor block's
// values when later blocks differ (a big.LITTLE board: cpu0 is an A53).
TEST(CpuInfoTest, Arm64MidrBoundaries) {
  auto r = ParseCpuInfo(
      "processor\t: 0\nFeatures\t: fp\nCPU implementer\t: 0xff\n"
      "CPU variant\t: 0xf\nCPU part\t: 0xfff\nCPU revision\t: 15\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->midr, 0xffffffffu);
  r = ParseCpuInfo(
      "processor\t: 0\nFeatures\t: fp\nCPU implementer\t: 0x41\n"
      "CPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\n"
      "processor\t: 4\nFeatures\t: fp\nCPU implementer\t: 0x41\n"
      "CPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->midr, 0x410fd034u);
}

// Malformed MIDR lines: no MIDR, the reason, and the flags still read.
TEST(CpuInfoTest, Arm64MalformedMidrLinesAreReasoned) {
  const std::string head = "processor\t: 0\nFeatures\t: fp asimd\n";
  const std::pair<std::string, std::string> cases[] = {
      {"CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU revision\t: 1\n",
       "/proc/cpuinfo: processor block 0: no CPU part line"},
      {"CPU part\t: 0xd4f\n",
       "/proc/cpuinfo: processor block 0: no CPU implementer line"},
      {"CPU implementer\t: 0x141\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
       "CPU revision\t: 1\n",
       "/proc/cpuinfo: processor block 0: CPU implementer '0x141' is not 0x "
       "and 1-2 hex digits"},
      {"CPU implementer\t: 65\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
       "CPU revision\t: 1\n",
       "/proc/cpuinfo: processor block 0: CPU implementer '65' is not 0x and "
       "1-2 hex digits"},
      {"CPU implementer\t: 0x41\nCPU variant\t: 0x10\nCPU part\t: 0xd4f\n"
       "CPU revision\t: 1\n",
       "/proc/cpuinfo: processor block 0: CPU variant '0x10' is not 0x and 1 "
       "hex digit"},
      {"CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0x1d4f\n"
       "CPU revision\t: 1\n",
       "/proc/cpuinfo: processor block 0: CPU part '0x1d4f' is not 0x and 1-3 "
       "hex digits"},
      {"CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0xd4g\n"
       "CPU revision\t: 1\n",
       "/proc/cpuinfo: processor block 0: CPU part '0xd4g' is not 0x and 1-3 "
       "hex digits"},
      {"CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
       "CPU revision\t: 16\n",
       "/proc/cpuinfo: processor block 0: CPU revision '16' is not a number "
       "from 0 to 15"},
      {"CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
       "CPU revision\t: 0x1\n",
       "/proc/cpuinfo: processor block 0: CPU revision '0x1' is not a number "
       "from 0 to 15"},
      {"CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
       "CPU revision\t: -1\n",
       "/proc/cpuinfo: processor block 0: CPU revision '-1' is not a number "
       "from 0 to 15"},
      {"CPU implementer\t: 0x41\nCPU variant\t: \nCPU part\t: 0xd4f\n"
       "CPU revision\t: 1\n",
       "/proc/cpuinfo: processor block 0: CPU variant '' is not 0x and 1 hex "
       "digit"},
  };
  for (const auto& [lines, reason] : cases) {
    SCOPED_TRACE(lines);
    auto r = ParseCpuInfo(head + lines);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->midr.has_value());
    EXPECT_EQ(r->midr_error, reason);
    EXPECT_EQ(r->flags_line, CpuInfoFacts::FlagsLine::kFeatures);
  }
  // A block's missing line is not taken from the next block.
  auto r = ParseCpuInfo(
      head +
      "CPU implementer\t: 0x41\nCPU variant\t: 0x0\nCPU revision\t: 1\n\n"
      "processor\t: 1\nFeatures\t: fp\nCPU implementer\t: 0x41\n"
      "CPU variant\t: 0x0\nCPU part\t: 0xd4f\nCPU revision\t: 1\n");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->midr.has_value());
  EXPECT_EQ(r->midr_error,
            "/proc/cpuinfo: processor block 0: no CPU part line");
}

// drivers/base/cacheinfo.c: level "%u\n", type "Data" / "Instruction" /
// "Unified", size "%uK\n".
TEST(CacheIndexTest, ParsesTheKernelsFormats) {
  EXPECT_EQ(*ParseCacheLevel("1\n"), 1u);
  EXPECT_EQ(*ParseCacheLevel("3"), 3u);
  EXPECT_EQ(*ParseCacheLevel("7\n"), 7u);
  EXPECT_EQ(*ParseCacheType("Data\n"), CacheType::kData);
  EXPECT_EQ(*ParseCacheType("Instruction\n"), CacheType::kInstruction);
  EXPECT_EQ(*ParseCacheType("Unified"), CacheType::kUnified);
  EXPECT_EQ(*ParseCacheSize("48K\n"), 49152u);
  EXPECT_EQ(*ParseCacheSize("1024K\n"), 1048576u);
  EXPECT_EQ(*ParseCacheSize("32768K\n"), 33554432u);
  EXPECT_EQ(*ParseCacheSize("1K"), 1024u);
  // The largest the kernel prints (a u32 of KiB).
  EXPECT_EQ(*ParseCacheSize("4294967295K\n"), 4294967295ull * 1024);
}

TEST(CacheIndexTest, RefusesMalformed) {
  const std::pair<absl::Status, const char*> cases[] = {
      {ParseCacheLevel("0\n").status(),
       "cache level '0\\n': not a level from 1 to 7"},
      {ParseCacheLevel("8\n").status(),
       "cache level '8\\n': not a level from 1 to 7"},
      {ParseCacheLevel("").status(), "cache level '': not a level from 1 to 7"},
      {ParseCacheLevel("+2").status(),
       "cache level '+2': not a level from 1 to 7"},
      {ParseCacheLevel("L2\n").status(),
       "cache level 'L2\\n': not a level from 1 to 7"},
      {ParseCacheType("data\n").status(),
       "cache type 'data\\n': not Data, Instruction or Unified"},
      {ParseCacheType("").status(),
       "cache type '': not Data, Instruction or Unified"},
      {ParseCacheSize("48\n").status(),
       "cache size '48\\n': not a number of KiB (\"48K\")"},
      {ParseCacheSize("1M\n").status(),
       "cache size '1M\\n': not a number of KiB (\"48K\")"},
      {ParseCacheSize("K\n").status(),
       "cache size 'K\\n': not a number of KiB (\"48K\")"},
      {ParseCacheSize("-1K").status(),
       "cache size '-1K': not a number of KiB (\"48K\")"},
      {ParseCacheSize("4294967296K").status(),
       "cache size '4294967296K': not a number of KiB (\"48K\")"},
      {ParseCacheSize("0K\n").status(), "cache size '0K\\n': zero"},
  };
  for (const auto& [status, message] : cases) {
    SCOPED_TRACE(message);
    ExpectRefused(status, message);
  }
}

NamedCacheIndex Index(const char* name, uint32_t level, CacheType type,
                      uint64_t kib) {
  return {name, CacheIndex{level, type, kib * 1024}};
}

// A Sapphire Rapids core (48K L1d, 32K L1i, 2M L2, 105M L3) and a
// Neoverse-V2 one (64K, 64K, 2M, 36M shared).
TEST(CacheLevelsTest, PicksDataAndUnifiedCaches) {
  CacheLevels c = SelectCacheLevels({
      Index("index0", 1, CacheType::kData, 48),
      Index("index1", 1, CacheType::kInstruction, 32),
      Index("index2", 2, CacheType::kUnified, 2048),
      Index("index3", 3, CacheType::kUnified, 107520),
  });
  EXPECT_EQ(*c.l1d, 49152u);
  EXPECT_EQ(*c.l2, 2097152u);
  EXPECT_EQ(*c.l3, 110100480u);
  // Order does not matter; a unified L1 counts when there is no data one.
  c = SelectCacheLevels({
      Index("index1", 2, CacheType::kUnified, 1024),
      Index("index0", 1, CacheType::kUnified, 64),
  });
  EXPECT_EQ(*c.l1d, 65536u);
  EXPECT_EQ(*c.l2, 1048576u);
  EXPECT_EQ(c.l3.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(c.l3.status().message(),
            "no level-3 data or unified cache among 2 cache indexes");
  // A data L1 wins over a unified one.
  c = SelectCacheLevels({Index("index0", 1, CacheType::kUnified, 64),
                         Index("index1", 1, CacheType::kData, 32)});
  EXPECT_EQ(*c.l1d, 32768u);
}

TEST(CacheLevelsTest, SaysWhyALevelIsUnknown) {
  // No cache description at all (an arm64 guest without PPTT).
  CacheLevels c = SelectCacheLevels({});
  EXPECT_EQ(c.l1d.status().message(),
            "no level-1 data cache among 0 cache indexes");
  EXPECT_EQ(c.l2.status().message(),
            "no level-2 data or unified cache among 0 cache indexes");
  // An index that could not be read: named with its reason.
  c = SelectCacheLevels({
      Index("index0", 1, CacheType::kData, 64),
      Index("index1", 1, CacheType::kInstruction, 64),
      {"index2", absl::InvalidArgumentError("size: cache size 'x': ...")},
  });
  EXPECT_EQ(*c.l1d, 65536u);
  EXPECT_EQ(c.l2.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(c.l2.status().message(),
            "no level-2 data or unified cache among 3 cache indexes "
            "(unread: index2: size: cache size 'x': ...)");
  // Two of a kind at one level: which one is meant is unknown.
  c = SelectCacheLevels({Index("index2", 2, CacheType::kUnified, 1024),
                         Index("index3", 2, CacheType::kUnified, 2048)});
  ExpectRefused(c.l2.status(),
                "index2 and index3 both describe a level-2 unified cache");
  // Instruction caches alone are no data cache.
  c = SelectCacheLevels({Index("index0", 1, CacheType::kInstruction, 64)});
  EXPECT_EQ(c.l1d.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tracehealth::agent
