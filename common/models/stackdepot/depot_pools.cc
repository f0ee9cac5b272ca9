#include "common/models/stackdepot/depot_pools.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth {
namespace {

constexpr int kPoolOrder = 2;   // DEPOT_POOL_ORDER
constexpr int kStackAlign = 4;  // DEPOT_STACK_ALIGN
constexpr int kExtraBits = 5;   // STACK_DEPOT_EXTRA_BITS

int PageShift(uint32_t page_size) {
  if (page_size == 0 || (page_size & (page_size - 1)) != 0) return 12;
  int shift = 0;
  while ((1u << shift) < page_size) ++shift;
  return shift;
}

// kstrtouint(text, 0): an optional '+', "0x" hex, a leading 0 octal, else
// decimal; digits only (one trailing newline allowed); at most UINT_MAX.
std::optional<uint64_t> KstrToUint(absl::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  int base = 10;
  if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  } else if (text.size() > 1 && text[0] == '0') {
    base = 8;
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char ch : text) {
    int digit;
    if (absl::ascii_isdigit(ch)) {
      digit = ch - '0';
    } else if (base == 16 && absl::ascii_isxdigit(ch)) {
      digit = absl::ascii_tolower(ch) - 'a' + 10;
    } else {
      return std::nullopt;
    }
    if (digit >= base) return std::nullopt;
    value = value * base + digit;
    if (value > 0xffffffffull) return std::nullopt;  // -ERANGE
  }
  return value;
}

}  // namespace

uint64_t DepotPoolBytes(uint32_t page_size) {
  return 1ull << (PageShift(page_size) + kPoolOrder);
}

uint64_t DepotPoolLimit(uint32_t page_size) {
  const int offset_bits = kPoolOrder + PageShift(page_size) - kStackAlign;
  const int index_bits = 32 - offset_bits - kExtraBits;
  return (1ull << index_bits) - 1;
}

uint64_t DepotDefaultMaxPools(uint32_t page_size) {
  return std::min(DepotPoolLimit(page_size), kDepotPoolsCap);
}

std::optional<uint64_t> MaxPoolsFromCmdline(absl::string_view cmdline,
                                            uint64_t limit,
                                            std::string* refused) {
  constexpr absl::string_view kKey = "stack_depot_max_pools=";
  std::optional<uint64_t> out;
  for (absl::string_view word :
       absl::StrSplit(cmdline, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    if (word.substr(0, kKey.size()) != kKey) continue;
    const std::optional<uint64_t> value = KstrToUint(word.substr(kKey.size()));
    std::string why;
    if (!value) {
      why = "not a number";
    } else if (*value < kDepotMinMaxPools) {
      why = absl::StrCat("below ", kDepotMinMaxPools);
    } else if (*value > limit) {
      why = absl::StrCat("exceeds ", limit);
    } else {
      out = *value;
      continue;
    }
    if (refused != nullptr) {
      if (!refused->empty()) refused->append("; ");
      absl::StrAppend(refused, word, ": ", why);
    }
  }
  return out;
}

}  // namespace tracehealth
