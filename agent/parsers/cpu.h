// Parsers for CPU topology files: /sys/devices/system/cpu/online (a CPU list
// such as "0-3,8-11"), /proc/cpuinfo (flags, model name, arm64's MIDR
// fields) and the cache description in
// /sys/devices/system/cpu/cpuN/cache/indexM/{level,type,size}.
//
// Pure functions; errors are InvalidArgument naming what was wrong.
#ifndef TRACEHEALTH_AGENT_PARSERS_CPU_H_
#define TRACEHEALTH_AGENT_PARSERS_CPU_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

// Number of CPUs in a kernel CPU list ("0", "0-3,8-11", "0-255\n").
// Errors: empty list, reversed or malformed ranges, overlapping ranges, more
// than 1,048,576 CPUs.
absl::StatusOr<uint32_t> ParseCpuListCount(absl::string_view text);

// From /proc/cpuinfo: whether the first CPU's flags include `invlpgb`,
// `hypervisor` and `ibt` (x86 "flags" line; on other architectures the
// "Features" line), and its "model name". Error when no processor block has a
// flags/Features line.
//
// arm64 (arch/arm64/kernel/cpuinfo.c) prints, per processor, "Features"
// (hwcaps: no `hypervisor`, which is x86's X86_FEATURE_HYPERVISOR; whether
// an arm64 kernel runs as a guest is not in the file), then
// "CPU implementer\t: 0x41", "CPU architecture: 8", "CPU variant\t: 0x3",
// "CPU part\t: 0xd0c", "CPU revision\t: 1", and no "model name" (only for
// a 32-bit reader: "ARMv8 Processor rev 1 (v8l)"). Those four fields of the
// first processor block that has them make `midr` (architecture 0xf, see
// arm_midr.h). Their absence is no error; a block with some but not all of
// them, or a value out of its field's range or not in the kernel's format
// ("0x" and hex digits; the revision decimal) leaves `midr` unset and says
// why in `midr_error`, the rest of the facts still parsed.
struct CpuInfoFacts {
  // Which line the flags came from.
  enum class FlagsLine { kFlags, kFeatures };
  bool invlpgb = false;
  // Meaningful only with flags_line kFlags (x86).
  bool hypervisor = false;
  bool ibt = false;
  FlagsLine flags_line = FlagsLine::kFlags;
  std::optional<std::string> model_name;
  std::optional<uint32_t> midr;
  std::string midr_error;
};
absl::StatusOr<CpuInfoFacts> ParseCpuInfo(absl::string_view text);

// One cache of a CPU, as /sys/devices/system/cpu/cpuN/cache/indexM
// describes it (drivers/base/cacheinfo.c): "level" ("%u\n", 1 to 7
// accepted), "type" ("Data", "Instruction" or "Unified") and "size" ("%uK\n":
// KiB, "48K", "32768K"; the kernel omits the file when the size is
// unknown). Errors name the file and the value refused.
enum class CacheType { kData, kInstruction, kUnified };
struct CacheIndex {
  uint32_t level = 0;
  CacheType type = CacheType::kUnified;
  uint64_t size_bytes = 0;
};
absl::StatusOr<uint32_t> ParseCacheLevel(absl::string_view text);
absl::StatusOr<CacheType> ParseCacheType(absl::string_view text);
absl::StatusOr<uint64_t> ParseCacheSize(absl::string_view text);

// A cache index directory's name ("index2") and what it described, or why
// it could not be read.
struct NamedCacheIndex {
  std::string name;
  absl::StatusOr<CacheIndex> index;
};

// The bytes of one CPU's level-1 data cache and of its level-2 and level-3
// caches (an instance's size: an L3 shared by a group of cores is the
// group's L3), from its cache index directories: for L1 the level-1 "Data"
// cache, else a level-1 "Unified" one; for L2 and L3 the level's "Unified"
// cache, else its "Data" one. Instruction caches are not counted.
// For each level the bytes, or why they are unknown: NotFound when no index
// describes such a cache (the reasons of the indexes that could not be read
// appended), InvalidArgument when two indexes describe the same level and
// type.
struct CacheLevels {
  absl::StatusOr<uint64_t> l1d = absl::UnknownError("not read");
  absl::StatusOr<uint64_t> l2 = absl::UnknownError("not read");
  absl::StatusOr<uint64_t> l3 = absl::UnknownError("not read");
};
CacheLevels SelectCacheLevels(const std::vector<NamedCacheIndex>& indexes);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_CPU_H_
