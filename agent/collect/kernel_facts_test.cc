#include "agent/collect/kernel_facts.h"

#include <string>
#include <vector>

#include "agent/testing/test_tree.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

std::string Unknown(const KernelFacts& f, const std::string& input) {
  for (const auto& u : f.unknown) {
    if (u.input() == input) return u.reason();
  }
  return "";
}

TEST(KernelFactsTest, ReleaseVersionCmdlineConfigAndCpus) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.16.0-7-cloud\n");
  t.Write("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian\n");
  t.Write("/proc/sys/kernel/arch", "x86_64\n");
  t.Write("/proc/cmdline", "ro preempt=none stack_depot_max_pools=16384\n");
  t.Write("/boot/config-6.16.0-7-cloud",
          "CONFIG_KASAN=y\nCONFIG_KASAN_GENERIC=y\nCONFIG_STACKDEPOT=y\n"
          "CONFIG_STACKDEPOT_MAX_FRAMES=32\nCONFIG_PREEMPT_VOLUNTARY=y\n"
          "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PAGE_SIZE_16KB=y\n");
  t.Write("/proc/cpuinfo",
          "processor\t: 0\nmodel name\t: AMD EPYC 9654\nflags\t\t: fpu "
          "invlpgb\n\n");
  HostFs fs(t.root());
  const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
  EXPECT_EQ(f.kernel.release(), "6.16.0-7-cloud");
  ASSERT_TRUE(f.release.has_value());
  EXPECT_EQ(f.release->minor, 16);
  EXPECT_EQ(f.kernel.version(), "#1 SMP PREEMPT_DYNAMIC Debian");
  EXPECT_EQ(f.kernel.arch(), "x86_64");
  EXPECT_EQ(f.kernel.cmdline(), "ro preempt=none stack_depot_max_pools=16384");
  EXPECT_EQ(f.kernel.config_source(), "/boot/config-6.16.0-7-cloud");
  EXPECT_TRUE(f.kernel.config_kasan());
  EXPECT_FALSE(f.kernel.config_kasan_vmalloc());  // absent: off
  EXPECT_EQ(f.kernel.config_stackdepot_max_frames(), 32u);
  EXPECT_EQ(f.kernel.page_size(), 16384u);
  // PREEMPT_DYNAMIC booted preempt=none.
  EXPECT_TRUE(f.kernel.preempt_dynamic());
  EXPECT_EQ(f.config_mode, v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(f.config_mode_source, "config and preempt= boot parameter");
  // The version string names no mode on a dynamic kernel.
  EXPECT_FALSE(f.version_mode.has_value());
  EXPECT_EQ(f.invlpgb, true);
  EXPECT_EQ(f.model_name, "AMD EPYC 9654");
  EXPECT_EQ(f.unknown.size(), 0) << f.unknown.begin()->input();
  // A config without CONFIG_PREEMPT_RCU=y: off.
  EXPECT_FALSE(f.kernel.config_preempt_rcu());
  EXPECT_TRUE(f.kernel.has_config_preempt_rcu());
  EXPECT_FALSE(f.hypervisor.value_or(true));
}

// A Debian 7.2 host on a CPU with IBT: the config at
// /usr/lib/modules/RELEASE/config builds it in and the flags line shows it.
TEST(KernelFactsTest, IbtFromTheConfigAndTheFlags) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "7.2.13+deb14-cloud-amd64\n");
  t.Write("/proc/sys/kernel/arch", "x86_64\n");
  t.Write("/proc/cmdline", "ro quiet\n");
  t.Write("/usr/lib/modules/7.2.13+deb14-cloud-amd64/config",
          "CONFIG_X86=y\nCONFIG_X86_KERNEL_IBT=y\n");
  t.Write("/proc/cpuinfo",
          "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
          "flags\t\t: fpu ibt\n\n");
  HostFs fs(t.root());
  KernelFacts f = ReadKernelFacts(fs);
  EXPECT_TRUE(f.kernel.config_x86_kernel_ibt());
  EXPECT_EQ(f.ibt, true);
}

// A Debian 6.1 guest: the upstream release from /proc/version (the last
// "Debian X.Y.Z": the compiler's "Debian 12.2.0-14" comes first),
// CONFIG_PREEMPT_RCU=y, the hypervisor flag, possible CPUs, and an arm64-
// style page size option.
TEST(KernelFactsTest, UpstreamVersionPreemptRcuAndGuestFlags) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.1.0-28-amd64\n");
  t.Write("/proc/sys/kernel/version",
          "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)\n");
  t.Write("/proc/version",
          "Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org) "
          "(gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for "
          "Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 "
          "(2024-11-22)\n");
  t.Write("/proc/sys/kernel/arch", "x86_64\n");
  t.Write("/proc/cmdline", "ro quiet\n");
  t.Write("/boot/config-6.1.0-28-amd64",
          "CONFIG_X86=y\nCONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_VOLUNTARY=y\n"
          "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_RCU=y\n");
  t.Write("/proc/cpuinfo",
          "processor\t: 0\nmodel name\t: QEMU TCG CPU version 2.5+\n"
          "flags\t\t: fpu hypervisor\n\n");
  t.Write("/sys/devices/system/cpu/possible", "0-7\n");
  HostFs fs(t.root());
  KernelFacts f = ReadKernelFacts(fs);
  EXPECT_EQ(f.kernel.upstream_version(), "6.1.119");
  EXPECT_EQ(f.kernel.upstream_version_source(),
            "/proc/version (Debian 6.1.119-1)");
  EXPECT_TRUE(f.kernel.config_preempt_rcu());
  EXPECT_EQ(f.config_mode, v1::PREEMPT_MODE_VOLUNTARY);
  EXPECT_EQ(f.kernel.page_size(), 4096u);
  EXPECT_EQ(f.hypervisor, true);
  EXPECT_EQ(f.ibt, false);                         // no ibt flag
  EXPECT_FALSE(f.kernel.config_x86_kernel_ibt());  // absent: off
  EXPECT_TRUE(f.kernel.has_config_x86_kernel_ibt());
  EXPECT_EQ(f.possible_cpus, 8u);
  // Ubuntu: /proc/version_signature's last field.
  t.Write("/proc/version_signature", "Ubuntu 6.8.0-45.45-generic 6.8.12\n");
  f = ReadKernelFacts(fs);
  EXPECT_EQ(f.kernel.upstream_version(), "6.8.12");
  EXPECT_EQ(f.kernel.upstream_version_source(),
            "/proc/version_signature (Ubuntu 6.8.0-45.45-generic 6.8.12)");
  t.Write("/proc/version_signature", "Ubuntu\n");
  f = ReadKernelFacts(fs);
  EXPECT_FALSE(f.kernel.has_upstream_version());
  EXPECT_NE(Unknown(f, "kernel.upstream_version"), "");
}

// 7dadeaa6e851 (7.0): x86-64 refuses preempt=none; the config's lazy stays.
TEST(KernelFactsTest, PreemptNoneRefusedFrom70OnX86) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "7.0.2\n");
  t.Write("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n");
  t.Write("/proc/sys/kernel/arch", "x86_64\n");
  t.Write("/proc/cmdline", "ro preempt=none\n");
  t.Write("/boot/config-7.0.2",
          "CONFIG_X86=y\nCONFIG_PREEMPT_LAZY=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
  HostFs fs(t.root());
  KernelFacts f = ReadKernelFacts(fs);
  EXPECT_EQ(f.config_mode, v1::PREEMPT_MODE_LAZY);
  EXPECT_EQ(f.config_mode_source,
            "config (preempt=none refused from 7.0 on this architecture)");
  // 6.19 honours it.
  t.Write("/proc/sys/kernel/osrelease", "6.19.3\n");
  t.Write("/boot/config-6.19.3",
          "CONFIG_X86=y\nCONFIG_PREEMPT_LAZY=y\nCONFIG_PREEMPT_DYNAMIC=y\n");
  f = ReadKernelFacts(fs);
  EXPECT_EQ(f.config_mode, v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(f.config_mode_source, "config and preempt= boot parameter");
}

// The config's four homes, first readable wins: /proc/config.gz, then
// /boot/config-RELEASE, /lib/modules/RELEASE/config (Fedora) and
// /usr/lib/modules/RELEASE/config (Debian's 7.x packages, which ship no
// /boot/config).
TEST(KernelFactsTest, ConfigFromEachOfItsFourHomesInOrder) {
  const std::string kRelease = "7.2.13+deb14-amd64";
  struct Home {
    std::string path;
    std::string text;
  };
  // Each home says a different page size, so the one read is visible.
  const std::vector<Home> homes = {
      {"/boot/config-" + kRelease, "CONFIG_PAGE_SIZE_4KB=y\n"},
      {"/lib/modules/" + kRelease + "/config", "CONFIG_PAGE_SIZE_16KB=y\n"},
      {"/usr/lib/modules/" + kRelease + "/config", "CONFIG_PAGE_SIZE_64KB=y\n"},
  };
  const uint32_t kPage[] = {4096, 16384, 65536};
  // Only home i (and those after it) present: home i is read.
  for (size_t i = 0; i < homes.size(); ++i) {
    TestTree t;
    t.Write("/proc/sys/kernel/osrelease", kRelease + "\n");
    for (size_t j = i; j < homes.size(); ++j) {
      t.Write(homes[j].path, homes[j].text);
    }
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    EXPECT_EQ(f.kernel.config_source(), homes[i].path);
    EXPECT_EQ(f.kernel.page_size(), kPage[i]) << homes[i].path;
    EXPECT_EQ(Unknown(f, "kernel.config"), "");
  }
  // An unparsable earlier home does not hide a later one.
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", kRelease + "\n");
  t.Write(homes[0].path, std::string("\0\x01binary", 8));
  t.Write(homes[2].path, homes[2].text);
  HostFs fs(t.root());
  const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
  EXPECT_EQ(f.kernel.config_source(), homes[2].path);
  EXPECT_EQ(f.kernel.page_size(), 65536u);
}

// No home readable: kernel.config is unknown, naming every path tried.
TEST(KernelFactsTest, NoConfigNamesEveryPathTried) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "7.0.2\n");
  HostFs fs(t.root());
  const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
  const std::string reason = Unknown(f, "kernel.config");
  for (const char* path :
       {"/proc/config.gz", "/boot/config-7.0.2", "/lib/modules/7.0.2/config",
        "/usr/lib/modules/7.0.2/config"}) {
    EXPECT_NE(reason.find(path), std::string::npos) << path << " in " << reason;
  }
  EXPECT_EQ(f.kernel.config_source(), "");
}

TEST(KernelFactsTest, WhatIsMissingIsNamedWithItsReason) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "banana\n");
  t.Write("/proc/sys/kernel/arch", "\n");
  HostFs fs(t.root());
  const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
  EXPECT_FALSE(f.kernel.has_release());
  EXPECT_FALSE(f.release.has_value());
  EXPECT_NE(Unknown(f, "kernel.release"), "");
  EXPECT_NE(Unknown(f, "kernel.version"), "");
  EXPECT_EQ(Unknown(f, "kernel.arch"), "/proc/sys/kernel/arch: empty");
  EXPECT_NE(Unknown(f, "kernel.cmdline"), "");
  // No /proc/config.gz, and no release to find /boot/config-RELEASE by.
  EXPECT_NE(Unknown(f, "kernel.config"), "");
  EXPECT_EQ(Unknown(f, "kernel.page_size"),
            "no page size in the kernel config");
  EXPECT_FALSE(f.invlpgb.has_value());
  EXPECT_NE(f.cpuinfo_error, "");
  EXPECT_FALSE(f.possible_cpus.has_value());
  EXPECT_NE(f.possible_error, "");
  // Neither /proc/version_signature nor a Debian /proc/version: no
  // upstream version, and that is no unknown input.
  EXPECT_FALSE(f.kernel.has_upstream_version());
  EXPECT_EQ(Unknown(f, "kernel.upstream_version"), "");
  // The version string alone: plain PREEMPT is full preemption.
  t.Write("/proc/sys/kernel/version", "#1 SMP PREEMPT x\n");
  EXPECT_EQ(ReadKernelFacts(fs, FeatureTable::Builtin()).version_mode,
            v1::PREEMPT_MODE_FULL);
}

// CONFIG_STACKDEPOT_MAX_FRAMES first appeared in 6.8: before, its absence
// is no gap (not applicable); from 6.8 on, a config without it is missing
// it (unknown).
TEST(KernelFactsTest, MaxFramesNotApplicableBefore68) {
  for (const char* release : {"6.7.12", "6.8.0"}) {
    TestTree t;
    t.Write("/proc/sys/kernel/osrelease", std::string(release) + "\n");
    t.Write(std::string("/boot/config-") + release, "CONFIG_STACKDEPOT=y\n");
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    EXPECT_FALSE(f.kernel.has_config_stackdepot_max_frames());
    const bool before = std::string(release) == "6.7.12";
    if (before) {
      ASSERT_EQ(f.not_applicable.size(), 1) << release;
      EXPECT_EQ(f.not_applicable[0].input(),
                "kernel.config_stackdepot_max_frames");
      EXPECT_EQ(
          f.not_applicable[0].reason(),
          "CONFIG_STACKDEPOT_MAX_FRAMES does not exist on this release "
          "(stackdepot_max_frames: since 6.8 -> 6.7.12: no, release inferred)");
      EXPECT_EQ(Unknown(f, "kernel.config_stackdepot_max_frames"), "");
    } else {
      EXPECT_EQ(f.not_applicable.size(), 0) << release;
      EXPECT_EQ(Unknown(f, "kernel.config_stackdepot_max_frames"),
                "CONFIG_STACKDEPOT_MAX_FRAMES not in the config");
    }
  }
}

// CONFIG_STACKDEPOT_MAX_FRAMES is taken from 1 to 4,096; a value outside is
// unknown, and the reason says which value it was.
TEST(KernelFactsTest, MaxFramesRange) {
  for (const char* frames : {"1", "4096", "0", "4097"}) {
    SCOPED_TRACE(frames);
    TestTree t;
    t.Write("/proc/sys/kernel/osrelease", "6.16.0\n");
    t.Write("/boot/config-6.16.0",
            std::string("CONFIG_STACKDEPOT=y\nCONFIG_STACKDEPOT_MAX_FRAMES=") +
                frames + "\n");
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    const int64_t n = std::stoll(frames);
    if (n >= 1 && n <= 4096) {
      EXPECT_EQ(f.kernel.config_stackdepot_max_frames(),
                static_cast<uint32_t>(n));
      EXPECT_EQ(Unknown(f, "kernel.config_stackdepot_max_frames"), "");
    } else {
      EXPECT_FALSE(f.kernel.has_config_stackdepot_max_frames());
      EXPECT_EQ(Unknown(f, "kernel.config_stackdepot_max_frames"),
                std::string("CONFIG_STACKDEPOT_MAX_FRAMES=") + frames +
                    " is out of range (1 to 4096)");
    }
  }
}

constexpr char kNeoverseV2Cpuinfo[] =
    "processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd evtstrm aes "
    "pmull sha1 sha2 crc32 atomics cpuid sve sve2\nCPU implementer\t: 0x41\n"
    "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"
    "CPU revision\t: 1\n\n";

void WriteCache(const TestTree& t, int index, const char* level,
                const char* type, const char* size) {
  const std::string dir =
      "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
  t.Write(dir + "/level", level);
  t.Write(dir + "/type", type);
  if (size != nullptr) t.Write(dir + "/size", size);
}

void WriteArm64(const TestTree& t) {
  t.Write("/proc/sys/kernel/osrelease", "6.18.33\n");
  t.Write("/proc/sys/kernel/arch", "aarch64\n");
  t.Write("/proc/cpuinfo", kNeoverseV2Cpuinfo);
}

// An arm64 host: the model from CPU 0's MIDR_EL1 (sysfs, agreeing with
// /proc/cpuinfo), no hypervisor flag to read, the caches from sysfs.
TEST(KernelFactsTest, Arm64ModelFromMidrAndCaches) {
  TestTree t;
  WriteArm64(t);
  t.Write("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
          "0x00000000410fd4f1\n");
  WriteCache(t, 0, "1\n", "Data\n", "64K\n");
  WriteCache(t, 1, "1\n", "Instruction\n", "64K\n");
  WriteCache(t, 2, "2\n", "Unified\n", "2048K\n");
  WriteCache(t, 3, "3\n", "Unified\n", "36864K\n");
  t.Write("/sys/devices/system/cpu/cpu0/cache/uevent", "");
  HostFs fs(t.root());
  const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
  EXPECT_EQ(f.midr, 0x410fd4f1u);
  EXPECT_EQ(f.midr_error, "");
  EXPECT_EQ(f.model_name, "Neoverse-V2");
  EXPECT_TRUE(f.warnings.empty());
  EXPECT_EQ(f.invlpgb, false);
  EXPECT_FALSE(f.hypervisor.has_value());
  EXPECT_FALSE(f.ibt.has_value());
  EXPECT_EQ(f.hypervisor_error,
            "/proc/cpuinfo has no hypervisor flag on this architecture (its "
            "Features line lists hwcaps)");
  EXPECT_EQ(*f.caches.l1d, 65536u);
  EXPECT_EQ(*f.caches.l2, 2097152u);
  EXPECT_EQ(*f.caches.l3, 37748736u);  // 36 MiB
}

// midr_el1 and /proc/cpuinfo disagree: the register is taken, and the
// agent's log says so. Without a readable midr_el1, /proc/cpuinfo's.
TEST(KernelFactsTest, Arm64MidrSources) {
  TestTree t;
  WriteArm64(t);
  const std::string midr =
      "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1";
  t.Write(midr, "0x00000000413fd0c1\n");
  {
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    EXPECT_EQ(f.midr, 0x413fd0c1u);
    EXPECT_EQ(f.model_name, "Neoverse-N1");
    ASSERT_EQ(f.warnings.size(), 1u);
    EXPECT_EQ(f.warnings[0], midr +
                                 ": 0x413fd0c1 disagrees with /proc/cpuinfo's "
                                 "first processor (0x410fd4f1); taking "
                                 "midr_el1");
  }
  // The kernel prints nothing for a CPU whose registers it never read.
  t.Write(midr, "");
  {
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    EXPECT_EQ(f.midr, 0x410fd4f1u);
    EXPECT_EQ(f.model_name, "Neoverse-V2");
    EXPECT_TRUE(f.warnings.empty());
  }
  // Neither source: unknown, with both reasons; no model name.
  t.Write("/proc/cpuinfo",
          "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"
          "CPU variant\t: 0x0\nCPU revision\t: 1\n\n");
  {
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    EXPECT_FALSE(f.midr.has_value());
    EXPECT_EQ(f.midr_error,
              midr +
                  ": midr_el1 '': empty (the kernel never read this CPU's "
                  "registers); /proc/cpuinfo: processor block 0: no CPU part "
                  "line");
    EXPECT_FALSE(f.model_name.has_value());
    EXPECT_EQ(f.invlpgb, false);  // the flags still read
  }
}

// An aarch64 kernel whose /proc/cpuinfo has no MIDR lines, and no sysfs
// register either: unknown. An x86 host has no MIDR to read at all.
TEST(KernelFactsTest, MidrUnknownOnArm64NotReadOnX86) {
  TestTree t;
  t.Write("/proc/sys/kernel/arch", "aarch64\n");
  t.Write("/proc/cpuinfo", "processor\t: 0\nFeatures\t: fp\n\n");
  {
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    EXPECT_FALSE(f.midr.has_value());
    EXPECT_EQ(f.midr_error.substr(f.midr_error.find("; ")),
              "; /proc/cpuinfo: no CPU implementer line");
    EXPECT_NE(f.midr_error.find("midr_el1"), std::string::npos);
  }
  t.Write("/proc/sys/kernel/arch", "x86_64\n");
  t.Write("/proc/cpuinfo",
          "processor\t: 0\nmodel name\t: AMD EPYC 9654\nflags\t\t: fpu\n\n");
  HostFs fs(t.root());
  const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
  EXPECT_FALSE(f.midr.has_value());
  EXPECT_EQ(f.midr_error, "");
  EXPECT_EQ(f.model_name, "AMD EPYC 9654");
  EXPECT_EQ(f.hypervisor, false);
  EXPECT_EQ(f.hypervisor_error, "");
  for (const auto& [input, cost] : fs.TakeCosts()) {
    EXPECT_EQ(input.find("midr_el1"), std::string::npos) << input;
  }
}

// Cache sizes the kernel does not give, or gives malformed: unknown, why.
TEST(KernelFactsTest, CacheSizesUnknownWithTheirReasons) {
  TestTree t;
  t.Write("/proc/cpuinfo",
          "processor\t: 0\nmodel name\t: X\nflags\t\t: fpu\n\n");
  {
    // No cache directory (an arm64 guest whose firmware describes none).
    HostFs fs(t.root());
    const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
    for (const absl::StatusOr<uint64_t>* c :
         {&f.caches.l1d, &f.caches.l2, &f.caches.l3}) {
      EXPECT_EQ(c->status().code(), absl::StatusCode::kNotFound);
      EXPECT_NE(
          c->status().message().find("/sys/devices/system/cpu/cpu0/cache"),
          std::string::npos)
          << c->status();
    }
  }
  WriteCache(t, 0, "1\n", "Data\n", "32K\n");
  WriteCache(t, 1, "2\n", "Unified\n", "1M\n");
  WriteCache(t, 2, "3\n", "Unified\n", nullptr);  // size not given
  HostFs fs(t.root());
  const KernelFacts f = ReadKernelFacts(fs, FeatureTable::Builtin());
  EXPECT_EQ(*f.caches.l1d, 32768u);
  EXPECT_EQ(std::string(f.caches.l2.status().message()),
            "no level-2 data or unified cache among 3 cache indexes (unread: "
            "index1: /sys/devices/system/cpu/cpu0/cache/index1/size: cache "
            "size '1M\\n': not a number of KiB (\"48K\"); index2: "
            "/sys/devices/system/cpu/cpu0/cache/index2/size: No such file or "
            "directory)");
  EXPECT_EQ(f.caches.l3.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tracehealth::agent
