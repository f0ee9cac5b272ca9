#include "common/escape.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracehealth {
namespace {

// Length of the valid UTF-8 sequence at the start of `s` and its code point;
// 0 when the first byte does not start one (RFC 3629: no overlong forms, no
// surrogates, at most U+10FFFF).
size_t DecodeUtf8(absl::string_view s, uint32_t* cp) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t n;
  uint32_t min;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    *cp = c & 0x1f;
    min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    *cp = c & 0x0f;
    min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    *cp = c & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xc0) != 0x80) return 0;
    *cp = (*cp << 6) | (b(i) & 0x3f);
  }
  if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff)) {
    return 0;
  }
  return n;
}

bool IsEscapedCodePoint(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

// Whether the bytes of `text` are all printable ASCII but backslash: the
// common case, answered without decoding.
bool PlainAscii(absl::string_view text) {
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f || c == '\\') return false;
  }
  return true;
}

}  // namespace

std::string EscapeText(absl::string_view text) {
  if (PlainAscii(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  while (!text.empty()) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(text, &cp);
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\x%02x",
                            static_cast<unsigned char>(text[0]));
      text.remove_prefix(1);
      continue;
    }
    if (cp == '\\') {
      out += "\\\\";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7f) {
      absl::StrAppendFormat(&out, "\\x%02x", cp);
    } else if (IsEscapedCodePoint(cp)) {
      absl::StrAppendFormat(&out, "\\u%04x", cp);
    } else {
      out.append(text.data(), n);
    }
    text.remove_prefix(n);
  }
  return out;
}

std::string TruncateText(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Back off continuation bytes so that no sequence is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) {
    --cut;
  }
  return absl::StrCat(text.substr(0, cut), "…(", text.size(), " bytes)");
}

std::string EchoText(absl::string_view text) {
  return EscapeText(TruncateText(text, kEchoBytes));
}

}  // namespace tracehealth
