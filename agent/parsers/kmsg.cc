#include "agent/parsers/kmsg.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tracehealth::agent {
namespace {

// The kernel masks the priority with LOG_FACMASK | LOG_PRIMASK (10 bits).
constexpr uint64_t kMaxPriority = 1023;
// A tab as the kernel log escapes it.
constexpr absl::string_view kEscapedTab = "\\x09";

bool AllDigits(absl::string_view s) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

bool ValidFlags(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isalpha(c) && c != '-' && c != '+') return false;
  }
  return true;
}

bool IsHex(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(c)) return false;
  }
  return true;
}

bool IsSymbolChar(char c) {
  return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '$';
}

// Leading spaces and escaped tabs.
absl::string_view StripIndent(absl::string_view s) {
  for (;;) {
    if (absl::ConsumePrefix(&s, " ") || absl::ConsumePrefix(&s, kEscapedTab)) {
      continue;
    }
    return s;
  }
}

// "+0xOFF/0xSIZE" at the start of `s`, consumed.
bool ConsumeOffset(absl::string_view* s) {
  if (!absl::ConsumePrefix(s, "+0x")) return false;
  size_t slash = s->find("/0x");
  if (slash == absl::string_view::npos || !IsHex(s->substr(0, slash))) {
    return false;
  }
  s->remove_prefix(slash + 3);
  size_t n = 0;
  while (n < s->size() && absl::ascii_isxdigit((*s)[n])) ++n;
  if (n == 0) return false;
  s->remove_prefix(n);
  return true;
}

}  // namespace

absl::StatusOr<KmsgRecord> ParseKmsgRecord(absl::string_view record) {
  absl::string_view line = record.substr(0, record.find('\n'));
  if (line.empty()) return absl::InvalidArgumentError("kmsg: empty record");
  if (line[0] == ' ') {
    return absl::InvalidArgumentError(
        "kmsg: a dictionary line without its record");
  }
  const size_t semi = line.find(';');
  const absl::string_view prefix =
      semi == absl::string_view::npos ? line : line.substr(0, semi);
  std::vector<absl::string_view> fields = absl::StrSplit(prefix, ',');
  // A record cut just after a comma: the field it started is missing.
  if (semi == absl::string_view::npos && fields.size() > 1 &&
      fields.back().empty()) {
    fields.pop_back();
  }
  // Every field present must be valid, cut short or not.
  KmsgRecord r;
  uint64_t pri = 0;
  if (!AllDigits(fields[0]) || !absl::SimpleAtoi(fields[0], &pri) ||
      pri > kMaxPriority) {
    return absl::InvalidArgumentError(
        "kmsg: the priority is not a number of 0-1023");
  }
  r.facility = static_cast<int>(pri >> 3);
  r.level = static_cast<int>(pri & 7);
  if (fields.size() > 1 &&
      (!AllDigits(fields[1]) || !absl::SimpleAtoi(fields[1], &r.seq))) {
    return absl::InvalidArgumentError(
        "kmsg: the sequence number is not a 64-bit decimal number");
  }
  if (fields.size() > 2 &&
      (!AllDigits(fields[2]) || !absl::SimpleAtoi(fields[2], &r.ts_usec))) {
    return absl::InvalidArgumentError(
        "kmsg: the timestamp is not a 64-bit decimal number");
  }
  if (fields.size() > 3 && !ValidFlags(fields[3])) {
    return absl::InvalidArgumentError("kmsg: bad flags field");
  }
  if (semi == absl::string_view::npos) {
    return absl::DataLossError("kmsg: record cut short before its text");
  }
  if (fields.size() < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("kmsg: ", fields.size(),
                     " prefix fields (want priority, sequence, "
                     "timestamp and flags)"));
  }
  r.continuation = absl::StrContains(fields[3], 'c');
  r.text = line.substr(semi + 1);
  return r;
}

namespace {

// "sym+0x10/0x20" or "sym+0x10/0x20 [mod]", after any "? " and "[<addr>] ".
std::optional<KmsgFrame> ParseFrameText(absl::string_view s) {
  KmsgFrame f;
  // "[<address>] " (older kernels) and "? " in either order.
  for (int i = 0; i < 2; ++i) {
    if (absl::ConsumePrefix(&s, "? ")) {
      f.reliable = false;
    } else if (absl::StartsWith(s, "[<")) {
      size_t end = s.find(">] ");
      if (end == absl::string_view::npos || !IsHex(s.substr(2, end - 2))) {
        return std::nullopt;
      }
      s.remove_prefix(end + 3);
    }
  }
  size_t n = 0;
  while (n < s.size() && IsSymbolChar(s[n])) ++n;
  if (n == 0) return std::nullopt;
  absl::string_view symbol = s.substr(0, n);
  absl::string_view rest = s.substr(n);
  if (!ConsumeOffset(&rest)) return std::nullopt;
  // Nothing, or " [module]".
  if (!rest.empty()) {
    if (!absl::ConsumePrefix(&rest, " [") || !absl::EndsWith(rest, "]") ||
        absl::StrContains(rest.substr(0, rest.size() - 1), ']')) {
      return std::nullopt;
    }
  }
  // Compiler clones (".constprop.0", ".isra.0", ".cold") are the function.
  f.symbol = symbol.substr(0, symbol.find('.'));
  if (f.symbol.empty()) return std::nullopt;
  f.frame = s;
  return f;
}

}  // namespace

std::optional<KmsgFrame> ParseKmsgFrame(absl::string_view text) {
  if (!absl::StartsWith(text, " ") && !absl::StartsWith(text, kEscapedTab)) {
    return std::nullopt;
  }
  return ParseFrameText(StripIndent(text));
}

std::optional<KmsgFrame> ParseKmsgRipFrame(absl::string_view text) {
  absl::string_view s = text;
  if (!absl::ConsumePrefix(&s, "RIP: ")) return std::nullopt;
  // The code segment: 0010 (__KERNEL_CS); user mode (0033, 0023) prints an
  // address, no symbol.
  if (!absl::ConsumePrefix(&s, "0010:")) return std::nullopt;
  std::optional<KmsgFrame> f = ParseFrameText(s);
  // The instruction pointer itself: no guess, no "? ".
  if (f.has_value() && !f->reliable) return std::nullopt;
  return f;
}

bool IsKmsgStackMarker(absl::string_view text) {
  absl::string_view s = StripIndent(text);
  if (s.size() == text.size()) return false;  // not indented
  for (absl::string_view m : {"<IRQ>", "</IRQ>", "<TASK>", "</TASK>", "<NMI>",
                              "</NMI>", "<SOFTIRQ>", "</SOFTIRQ>", "<EOI>"}) {
    if (s == m) return true;
  }
  return false;
}

}  // namespace tracehealth::agent
