#include "agent/collect/kernel_facts.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "agent/parsers/arm_midr.h"
#include "agent/parsers/cpu.h"
#include "agent/parsers/kconfig.h"
#include "agent/parsers/kernel_version.h"
#include "agent/parsers/preempt.h"
#include "common/procfs/proc.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSmallFile = 64 * 1024;
constexpr size_t kConfigGzMax = 4 << 20;
constexpr size_t kConfigTextMax = 16 << 20;
// The largest CONFIG_STACKDEPOT_MAX_FRAMES taken as a record size.
constexpr int64_t kMaxStackDepotFrames = 4096;

void ReadRelease(const HostFs& fs, KernelFacts* f) {
  v1::KernelInfo* k = &f->kernel;
  absl::StatusOr<std::string> rel =
      fs.ReadFile("/proc/sys/kernel/osrelease", kSmallFile);
  if (rel.ok()) {
    std::string r(absl::StripAsciiWhitespace(*rel));
    absl::StatusOr<KernelRelease> parsed = ParseKernelRelease(r);
    if (parsed.ok()) {
      k->set_release(r);
      f->release = *parsed;
    } else {
      AddUnknown(&f->unknown, "kernel.release", parsed.status().message());
    }
  } else {
    AddUnknown(&f->unknown, "kernel.release", rel.status().message());
  }
  absl::StatusOr<std::string> ver =
      fs.ReadFile("/proc/sys/kernel/version", kSmallFile);
  if (ver.ok()) {
    absl::StatusOr<VersionPreemptFlags> flags = ParseVersionPreemptFlags(*ver);
    if (flags.ok()) {
      k->set_version(std::string(absl::StripAsciiWhitespace(*ver)));
      f->version_mode = ModeFromVersionFlags(*flags);
      if (flags->dynamic) k->set_preempt_dynamic(true);
    } else {
      AddUnknown(&f->unknown, "kernel.version", flags.status().message());
    }
  } else {
    AddUnknown(&f->unknown, "kernel.version", ver.status().message());
  }
}

// The arch sysctl, else uname() on the live root only.
void ReadArch(const HostFs& fs, KernelFacts* f) {
  v1::KernelInfo* k = &f->kernel;
  absl::StatusOr<std::string> arch =
      fs.ReadFile("/proc/sys/kernel/arch", kSmallFile);
  if (arch.ok() && !absl::StripAsciiWhitespace(*arch).empty()) {
    k->set_arch(std::string(absl::StripAsciiWhitespace(*arch)));
  } else if (fs.root() == "/") {
    struct utsname u;
    if (uname(&u) == 0) k->set_arch(u.machine);
  }
  if (!k->has_arch()) {
    AddUnknown(
        &f->unknown, "kernel.arch",
        arch.ok() ? "/proc/sys/kernel/arch: empty" : arch.status().message());
  }
}

// The upstream release behind a Debian (/proc/version) or Ubuntu
// (/proc/version_signature) release; other kernels have neither, which is
// not an unknown input.
void ReadUpstreamVersion(const HostFs& fs, KernelFacts* f) {
  v1::KernelInfo* k = &f->kernel;
  absl::StatusOr<std::string> signature =
      fs.ReadFile("/proc/version_signature", kSmallFile);
  if (signature.ok()) {
    absl::StatusOr<UpstreamVersion> v = ParseVersionSignature(*signature);
    if (v.ok()) {
      k->set_upstream_version(v->version);
      k->set_upstream_version_source(
          absl::StrCat("/proc/version_signature (", v->evidence, ")"));
      return;
    }
    AddUnknown(&f->unknown, "kernel.upstream_version", v.status().message());
    return;
  }
  absl::StatusOr<std::string> banner = fs.ReadFile("/proc/version", kSmallFile);
  if (!banner.ok()) return;
  if (std::optional<UpstreamVersion> v = DebianUpstreamVersion(*banner)) {
    k->set_upstream_version(v->version);
    k->set_upstream_version_source(
        absl::StrCat("/proc/version (", v->evidence, ")"));
  }
}

// The command line; returns its preempt= value ("" when absent).
std::string ReadCmdline(const HostFs& fs, KernelFacts* f) {
  absl::StatusOr<std::string> cmdline = fs.ReadFile("/proc/cmdline", 4096);
  if (!cmdline.ok()) {
    AddUnknown(&f->unknown, "kernel.cmdline", cmdline.status().message());
    return "";
  }
  f->kernel.set_cmdline(
      std::string(absl::StripTrailingAsciiWhitespace(*cmdline)));
  return CmdlineParam(*cmdline, "preempt").value_or("");
}

absl::StatusOr<KernelConfig> ParseConfigText(
    const absl::StatusOr<std::string>& text) {
  return text.ok() ? KernelConfig::Parse(*text)
                   : absl::StatusOr<KernelConfig>(text.status());
}

// The kernel config from the first of these that reads and parses:
// /proc/config.gz (CONFIG_IKCONFIG_PROC), /boot/config-RELEASE (Debian up to
// 6.x, Ubuntu, RHEL), /lib/modules/RELEASE/config and
// /usr/lib/modules/RELEASE/config (Debian's 7.x packages, Fedora). Sets
// config_source to the path read; when none does, kernel.config is unknown
// with every source's reason.
std::optional<KernelConfig> FindConfig(const HostFs& fs, KernelFacts* f) {
  v1::KernelInfo* k = &f->kernel;
  std::vector<std::string> errors;
  absl::StatusOr<std::string> gz = fs.ReadFile("/proc/config.gz", kConfigGzMax);
  if (gz.ok()) {
    absl::StatusOr<KernelConfig> parsed =
        ParseConfigText(Gunzip(*gz, kConfigTextMax));
    if (parsed.ok()) {
      k->set_config_source("/proc/config.gz");
      return *std::move(parsed);
    }
    errors.push_back(
        absl::StrCat("/proc/config.gz: ", parsed.status().message()));
  } else {
    errors.emplace_back(gz.status().message());
  }
  if (k->has_release()) {
    const std::string path_candidates[] = {
        absl::StrCat("/boot/config-", k->release()),
        absl::StrCat("/lib/modules/", k->release(), "/config"),
        absl::StrCat("/usr/lib/modules/", k->release(), "/config")};
    for (const std::string& path : path_candidates) {
      absl::StatusOr<std::string> text = fs.ReadFile(path, kConfigTextMax);
      if (!text.ok()) {
        errors.emplace_back(text.status().message());
        continue;
      }
      absl::StatusOr<KernelConfig> parsed = KernelConfig::Parse(*text);
      if (parsed.ok()) {
        k->set_config_source(path);
        return *std::move(parsed);
      }
      errors.push_back(absl::StrCat(path, ": ", parsed.status().message()));
    }
  } else {
    errors.emplace_back("no kernel release to find its config by");
  }
  AddUnknown(&f->unknown, "kernel.config", absl::StrJoin(errors, "; "));
  return std::nullopt;
}

// What the config says: the options the models need, preemption (with
// preempt= on a PREEMPT_DYNAMIC kernel) and the page size.
void ApplyConfig(const KernelConfig& config, const std::string& cmdline_preempt,
                 const FeatureTable& features, bool none_voluntary_refused,
                 KernelFacts* f) {
  v1::KernelInfo* k = &f->kernel;
  auto set_bool = [&](const char* name, void (v1::KernelInfo::*setter)(bool)) {
    // Options absent from a config are off (Kconfig omits options whose
    // dependencies are unmet).
    (k->*setter)(config.Enabled(name).value_or(false));
  };
  set_bool("CONFIG_KASAN", &v1::KernelInfo::set_config_kasan);
  set_bool("CONFIG_KASAN_GENERIC", &v1::KernelInfo::set_config_kasan_generic);
  set_bool("CONFIG_KASAN_VMALLOC", &v1::KernelInfo::set_config_kasan_vmalloc);
  set_bool("CONFIG_KASAN_SW_TAGS", &v1::KernelInfo::set_config_kasan_sw_tags);
  set_bool("CONFIG_KASAN_HW_TAGS", &v1::KernelInfo::set_config_kasan_hw_tags);
  set_bool("CONFIG_PAGE_OWNER", &v1::KernelInfo::set_config_page_owner);
  set_bool("CONFIG_STACKDEPOT", &v1::KernelInfo::set_config_stackdepot);
  set_bool("CONFIG_FUNCTION_GRAPH_TRACER",
           &v1::KernelInfo::set_config_function_graph_tracer);
  set_bool("CONFIG_FPROBE", &v1::KernelInfo::set_config_fprobe);
  set_bool("CONFIG_PREEMPT_RCU", &v1::KernelInfo::set_config_preempt_rcu);
  set_bool("CONFIG_X86_KERNEL_IBT", &v1::KernelInfo::set_config_x86_kernel_ibt);
  std::optional<int64_t> frames = config.Int("CONFIG_STACKDEPOT_MAX_FRAMES");
  if (frames.has_value() && *frames > 0 && *frames <= kMaxStackDepotFrames) {
    k->set_config_stackdepot_max_frames(static_cast<uint32_t>(*frames));
  } else if (frames.has_value()) {
    // In the config, but no record size the kernel could have built.
    AddUnknown(
        &f->unknown, "kernel.config_stackdepot_max_frames",
        absl::StrCat("CONFIG_STACKDEPOT_MAX_FRAMES=", *frames,
                     " is out of range (1 to ", kMaxStackDepotFrames, ")"));
  } else if (k->config_stackdepot()) {
    // Absent because the release predates the option, or missing.
    const FeatureAnswer option =
        f->release.has_value()
            ? features.Has(feature::kStackdepotMaxFrames, *f->release)
            : FeatureAnswer{true, ""};
    if (!option.present) {
      AddNotApplicable(&f->not_applicable,
                       "kernel.config_stackdepot_max_frames",
                       absl::StrCat("CONFIG_STACKDEPOT_MAX_FRAMES does not "
                                    "exist on this release (",
                                    option.row, ")"));
    } else {
      AddUnknown(&f->unknown, "kernel.config_stackdepot_max_frames",
                 "CONFIG_STACKDEPOT_MAX_FRAMES not in the config");
    }
  }
  const bool dynamic = config.Enabled("CONFIG_PREEMPT_DYNAMIC").value_or(false);
  k->set_preempt_dynamic(dynamic);
  f->config_mode =
      ModeFromConfig(config, cmdline_preempt, none_voluntary_refused);
  const v1::PreemptMode boot = SchedPreemptMode(cmdline_preempt);
  const bool boot_counts =
      dynamic && boot != v1::PREEMPT_MODE_UNKNOWN && f->config_mode == boot;
  f->config_mode_source =
      boot_counts ? "config and preempt= boot parameter"
      : dynamic && boot != v1::PREEMPT_MODE_UNKNOWN
          ? absl::StrCat("config (preempt=", cmdline_preempt,
                         " refused from 7.0 on this architecture)")
          : "config";
  if (std::optional<uint32_t> page = PageSizeFromConfig(config)) {
    k->set_page_size(*page);
  }
}

constexpr char kMidrPath[] =
    "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1";
constexpr char kCacheDir[] = "/sys/devices/system/cpu/cpu0/cache";
// More cache indexes than any CPU has (4 or 5) are not read.
constexpr size_t kMaxCacheIndexes = 16;

// arm64's MIDR: sysfs when it reads and parses, else /proc/cpuinfo's.
void ReadMidr(const HostFs& fs, const absl::StatusOr<CpuInfoFacts>& cpuinfo,
              KernelFacts* f) {
  const bool cpuinfo_lines = cpuinfo.ok() && (cpuinfo->midr.has_value() ||
                                              !cpuinfo->midr_error.empty());
  if (NormalizeArch(f->kernel.arch()) != "aarch64" && !cpuinfo_lines) return;
  absl::StatusOr<std::string> text = fs.ReadFile(kMidrPath, kSmallFile);
  absl::StatusOr<uint32_t> sysfs =
      text.ok() ? ParseMidrEl1(*text) : absl::StatusOr<uint32_t>(text.status());
  const std::optional<uint32_t> listed =
      cpuinfo.ok() ? cpuinfo->midr : std::nullopt;
  if (sysfs.ok()) {
    f->midr = *sysfs;
    if (listed.has_value() && !SameMidr(*sysfs, *listed)) {
      f->warnings.push_back(absl::StrFormat(
          "%s: 0x%08x disagrees with /proc/cpuinfo's first processor "
          "(0x%08x); taking midr_el1",
          kMidrPath, *sysfs, *listed));
    }
  } else if (listed.has_value()) {
    f->midr = *listed;
  } else {
    const std::string sysfs_error =
        text.ok() ? absl::StrCat(kMidrPath, ": ", sysfs.status().message())
                  : std::string(sysfs.status().message());
    const std::string cpuinfo_error =
        !cpuinfo.ok() ? f->cpuinfo_error
        : !cpuinfo->midr_error.empty()
            ? cpuinfo->midr_error
            : "/proc/cpuinfo: no CPU implementer line";
    f->midr_error = absl::StrCat(sysfs_error, "; ", cpuinfo_error);
  }
  if (f->midr.has_value()) f->model_name = ArmCpuModelName(*f->midr);
}

void ReadCpuinfo(const HostFs& fs, KernelFacts* f) {
  absl::StatusOr<std::string> cpuinfo = fs.ReadFile("/proc/cpuinfo", 16 << 20);
  absl::StatusOr<CpuInfoFacts> facts =
      cpuinfo.ok() ? ParseCpuInfo(*cpuinfo)
                   : absl::StatusOr<CpuInfoFacts>(cpuinfo.status());
  if (facts.ok()) {
    f->invlpgb = facts->invlpgb;
    if (facts->flags_line == CpuInfoFacts::FlagsLine::kFlags) {
      f->hypervisor = facts->hypervisor;
      f->ibt = facts->ibt;
    } else {
      f->hypervisor_error =
          "/proc/cpuinfo has no hypervisor flag on this architecture (its "
          "Features line lists hwcaps)";
    }
    f->model_name = facts->model_name;
  } else {
    f->cpuinfo_error = std::string(facts.status().message());
  }
  ReadMidr(fs, facts, f);
}

// CPU 0's cache index directories, in index order.
void ReadCaches(const HostFs& fs, KernelFacts* f) {
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(kCacheDir, 64);
  if (!names.ok()) {
    f->caches = CacheLevels{names.status(), names.status(), names.status()};
    return;
  }
  std::vector<std::pair<uint32_t, std::string>> dirs;
  for (const std::string& name : *names) {
    absl::string_view digits = name;
    uint32_t n;
    if (absl::ConsumePrefix(&digits, "index") && !digits.empty() &&
        absl::c_all_of(digits, absl::ascii_isdigit) &&
        absl::SimpleAtoi(digits, &n)) {
      dirs.emplace_back(n, name);
    }
  }
  std::sort(dirs.begin(), dirs.end());
  if (dirs.size() > kMaxCacheIndexes) dirs.resize(kMaxCacheIndexes);
  std::vector<NamedCacheIndex> indexes;
  for (const auto& [n, name] : dirs) {
    const std::string dir = absl::StrCat(kCacheDir, "/", name);
    auto read = [&](const char* file, auto parse) {
      const std::string path = absl::StrCat(dir, "/", file);
      absl::StatusOr<std::string> text = fs.ReadFile(path, kSmallFile);
      if (!text.ok()) {
        return decltype(parse(absl::string_view()))(text.status());
      }
      auto v = parse(*text);
      if (!v.ok()) {
        return decltype(v)(absl::Status(
            v.status().code(), absl::StrCat(path, ": ", v.status().message())));
      }
      return v;
    };
    absl::StatusOr<uint32_t> level = read("level", ParseCacheLevel);
    absl::StatusOr<CacheType> type = read("type", ParseCacheType);
    absl::StatusOr<uint64_t> size = read("size", ParseCacheSize);
    NamedCacheIndex& index = indexes.emplace_back();
    index.name = name;
    if (!level.ok()) {
      index.index = level.status();
    } else if (!type.ok()) {
      index.index = type.status();
    } else if (!size.ok()) {
      index.index = size.status();
    } else {
      index.index = CacheIndex{*level, *type, *size};
    }
  }
  f->caches = SelectCacheLevels(indexes);
}

void ReadPossibleCpus(const HostFs& fs, KernelFacts* f) {
  absl::StatusOr<std::string> text =
      fs.ReadFile("/sys/devices/system/cpu/possible", kSmallFile);
  absl::StatusOr<uint32_t> n = text.ok()
                                   ? ParseCpuListCount(*text)
                                   : absl::StatusOr<uint32_t>(text.status());
  if (n.ok()) {
    f->possible_cpus = *n;
  } else {
    f->possible_error = std::string(n.status().message());
  }
}

}  // namespace

KernelFacts ReadKernelFacts(const HostFs& fs, const FeatureTable& features) {
  KernelFacts f;
  ReadRelease(fs, &f);
  ReadUpstreamVersion(fs, &f);
  ReadArch(fs, &f);
  const std::string cmdline_preempt = ReadCmdline(fs, &f);
  // 7.0+ on architectures with PREEMPT_LAZY ignore preempt=none|voluntary.
  const bool refused =
      f.release.has_value() &&
      features
          .Has(feature::kPreemptModesRestricted, *f.release, f.kernel.arch())
          .present;
  if (std::optional<KernelConfig> config = FindConfig(fs, &f)) {
    ApplyConfig(*config, cmdline_preempt, features, refused, &f);
  }
  v1::KernelInfo* k = &f.kernel;
  if (!k->has_page_size() && fs.root() == "/") {
    long ps = sysconf(_SC_PAGESIZE);
    if (ps > 0) k->set_page_size(static_cast<uint32_t>(ps));
  }
  if (!k->has_page_size()) {
    AddUnknown(&f.unknown, "kernel.page_size",
               "no page size in the kernel config");
  }
  ReadCpuinfo(fs, &f);
  ReadCaches(fs, &f);
  ReadPossibleCpus(fs, &f);
  return f;
}

}  // namespace tracehealth::agent
