#include "agent/parsers/cpu.h"

#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/parsers/arm_midr.h"

namespace tracehealth::agent {
namespace {

constexpr uint64_t kMaxCpus = 1 << 20;

absl::Status Bad(absl::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat("cpu list: ", detail));
}

}  // namespace

absl::StatusOr<uint32_t> ParseCpuListCount(absl::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (t.empty()) return Bad("empty");
  uint64_t count = 0;
  int64_t last_end = -1;
  for (absl::string_view range : absl::StrSplit(t, ',')) {
    std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
    uint32_t lo, hi;
    if (ends.size() == 1 && absl::SimpleAtoi(ends[0], &lo)) {
      hi = lo;
    } else if (ends.size() != 2 || !absl::SimpleAtoi(ends[0], &lo) ||
               !absl::SimpleAtoi(ends[1], &hi)) {
      return Bad(absl::StrCat("malformed range '", range, "'"));
    }
    // SimpleAtoi accepts a leading '+' or spaces; the kernel never prints them.
    for (absl::string_view e : ends) {
      if (e.empty() || !absl::ascii_isdigit(e[0])) {
        return Bad(absl::StrCat("malformed range '", range, "'"));
      }
    }
    if (hi < lo) return Bad(absl::StrCat("reversed range '", range, "'"));
    if (static_cast<int64_t>(lo) <= last_end) {
      return Bad(absl::StrCat("range '", range, "' overlaps or is unordered"));
    }
    last_end = hi;
    count += static_cast<uint64_t>(hi) - lo + 1;
    if (count > kMaxCpus) return Bad("implausibly many CPUs");
  }
  return static_cast<uint32_t>(count);
}

namespace {

// The four MIDR lines of one processor block, as printed.
struct MidrLines {
  int block = -1;  // the processor block they are in; -1: none seen
  std::optional<absl::string_view> implementer, variant, part, revision;
};

// "0x" and 1 to `max_digits` hex digits (the kernel's "0x%02x", "0x%x",
// "0x%03x"), at most `max`.
std::optional<uint32_t> HexField(absl::string_view v, size_t max_digits,
                                 uint32_t max) {
  if (!absl::ConsumePrefix(&v, "0x") || v.empty() || v.size() > max_digits) {
    return std::nullopt;
  }
  uint32_t out = 0;
  for (char c : v) {
    if (!absl::ascii_isxdigit(c)) return std::nullopt;
    out =
        out * 16 +
        (absl::ascii_isdigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10);
  }
  if (out > max) return std::nullopt;
  return out;
}

absl::StatusOr<uint32_t> MidrFromLines(const MidrLines& l) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("/proc/cpuinfo: processor block ", l.block, ": ", what));
  };
  struct Field {
    const char* key;
    const std::optional<absl::string_view>* value;
  };
  for (const Field& f :
       {Field{"CPU implementer", &l.implementer},
        Field{"CPU variant", &l.variant}, Field{"CPU part", &l.part},
        Field{"CPU revision", &l.revision}}) {
    if (!f.value->has_value()) {
      return bad(absl::StrCat("no ", f.key, " line"));
    }
  }
  MidrFields m;
  m.architecture = 0xf;
  std::optional<uint32_t> v = HexField(*l.implementer, 2, 0xff);
  if (!v)
    return bad(absl::StrCat("CPU implementer '", *l.implementer,
                            "' is not 0x and 1-2 hex digits"));
  m.implementer = *v;
  v = HexField(*l.variant, 1, 0xf);
  if (!v)
    return bad(absl::StrCat("CPU variant '", *l.variant,
                            "' is not 0x and 1 hex digit"));
  m.variant = *v;
  v = HexField(*l.part, 3, 0xfff);
  if (!v)
    return bad(
        absl::StrCat("CPU part '", *l.part, "' is not 0x and 1-3 hex digits"));
  m.part = *v;
  uint32_t rev;
  if (l.revision->empty() || !absl::ascii_isdigit((*l.revision)[0]) ||
      !absl::SimpleAtoi(*l.revision, &rev) || rev > 15) {
    return bad(absl::StrCat("CPU revision '", *l.revision,
                            "' is not a number from 0 to 15"));
  }
  m.revision = rev;
  return EncodeMidr(m);
}

}  // namespace

absl::StatusOr<CpuInfoFacts> ParseCpuInfo(absl::string_view text) {
  CpuInfoFacts out;
  bool have_flags = false;
  int block = 0;  // processor lines seen, less one (0 before the first too)
  bool seen_processor = false;
  MidrLines midr;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    absl::string_view key = absl::StripAsciiWhitespace(line.substr(0, colon));
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (key == "processor") {
      if (seen_processor) ++block;
      seen_processor = true;
      // The first block with the MIDR lines is complete.
      if (have_flags && midr.block >= 0 && block > midr.block) break;
    } else if (key == "model name" && !out.model_name.has_value()) {
      out.model_name = std::string(value);
    } else if ((key == "flags" || key == "Features") && !have_flags) {
      have_flags = true;
      out.flags_line = key == "flags" ? CpuInfoFacts::FlagsLine::kFlags
                                      : CpuInfoFacts::FlagsLine::kFeatures;
      for (absl::string_view flag :
           absl::StrSplit(value, ' ', absl::SkipEmpty())) {
        if (flag == "invlpgb") out.invlpgb = true;
        if (flag == "hypervisor") out.hypervisor = true;
        if (flag == "ibt") out.ibt = true;
      }
    } else if (key == "CPU implementer" || key == "CPU variant" ||
               key == "CPU part" || key == "CPU revision") {
      if (midr.block < 0) midr.block = block;
      if (block == midr.block) {
        std::optional<absl::string_view>* slot =
            key == "CPU implementer" ? &midr.implementer
            : key == "CPU variant"   ? &midr.variant
            : key == "CPU part"      ? &midr.part
                                     : &midr.revision;
        if (!slot->has_value()) *slot = value;
      }
    }
    // x86: the first CPU's flags and model name are all there is.
    if (have_flags && out.flags_line == CpuInfoFacts::FlagsLine::kFlags &&
        out.model_name.has_value()) {
      break;
    }
  }
  if (!have_flags) {
    return absl::InvalidArgumentError("/proc/cpuinfo: no flags line");
  }
  if (midr.block >= 0) {
    absl::StatusOr<uint32_t> m = MidrFromLines(midr);
    if (m.ok()) {
      out.midr = *m;
    } else {
      out.midr_error = std::string(m.status().message());
    }
  }
  return out;
}

absl::StatusOr<uint32_t> ParseCacheLevel(absl::string_view text) {
  absl::string_view t = text;
  absl::ConsumeSuffix(&t, "\n");
  uint32_t level;
  if (t.empty() || !absl::ascii_isdigit(t[0]) || !absl::SimpleAtoi(t, &level) ||
      level < 1 || level > 7) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cache level '", absl::CEscape(text), "': not a level from 1 to 7"));
  }
  return level;
}

absl::StatusOr<CacheType> ParseCacheType(absl::string_view text) {
  absl::string_view t = text;
  absl::ConsumeSuffix(&t, "\n");
  if (t == "Data") return CacheType::kData;
  if (t == "Instruction") return CacheType::kInstruction;
  if (t == "Unified") return CacheType::kUnified;
  return absl::InvalidArgumentError(
      absl::StrCat("cache type '", absl::CEscape(text),
                   "': not Data, Instruction or Unified"));
}

absl::StatusOr<uint64_t> ParseCacheSize(absl::string_view text) {
  absl::string_view t = text;
  absl::ConsumeSuffix(&t, "\n");
  uint32_t kib;
  if (!absl::ConsumeSuffix(&t, "K") || t.empty() ||
      !absl::ascii_isdigit(t[0]) || !absl::SimpleAtoi(t, &kib)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache size '", absl::CEscape(text),
                     "': not a number of KiB (\"48K\")"));
  }
  if (kib == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache size '", absl::CEscape(text), "': zero"));
  }
  return uint64_t{kib} * 1024;
}

CacheLevels SelectCacheLevels(const std::vector<NamedCacheIndex>& indexes) {
  std::vector<std::string> unread;
  for (const NamedCacheIndex& n : indexes) {
    if (!n.index.ok()) {
      unread.push_back(absl::StrCat(n.name, ": ", n.index.status().message()));
    }
  }
  const std::string unread_text =
      unread.empty()
          ? ""
          : absl::StrCat(" (unread: ", absl::StrJoin(unread, "; "), ")");
  // The cache of `level` of type `first`, else of type `second`.
  auto pick = [&](uint32_t level, CacheType first,
                  CacheType second) -> absl::StatusOr<uint64_t> {
    for (CacheType type : {first, second}) {
      const NamedCacheIndex* found = nullptr;
      for (const NamedCacheIndex& n : indexes) {
        if (!n.index.ok() || n.index->level != level || n.index->type != type) {
          continue;
        }
        if (found != nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              found->name, " and ", n.name, " both describe a level-", level,
              type == CacheType::kData ? " data" : " unified", " cache"));
        }
        found = &n;
      }
      if (found != nullptr) return found->index->size_bytes;
    }
    return absl::NotFoundError(absl::StrCat(
        "no level-", level, level == 1 ? " data" : " data or unified",
        " cache among ", indexes.size(), " cache indexes", unread_text));
  };
  CacheLevels out;
  out.l1d = pick(1, CacheType::kData, CacheType::kUnified);
  out.l2 = pick(2, CacheType::kUnified, CacheType::kData);
  out.l3 = pick(3, CacheType::kUnified, CacheType::kData);
  return out;
}

}  // namespace tracehealth::agent
