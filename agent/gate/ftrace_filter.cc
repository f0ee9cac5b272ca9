#include "agent/gate/ftrace_filter.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tracehealth::agent {

namespace {

// The character at `i`, or NUL past the end (lib/glob.c walks C strings).
unsigned char At(absl::string_view s, size_t i) {
  return i < s.size() ? static_cast<unsigned char>(s[i]) : '\0';
}

}  // namespace

// lib/glob.c glob_match(), over string_views: the same steps, so the same
// answers, including for malformed classes (a '[' without ']' is literal).
bool GlobMatch(absl::string_view pat, absl::string_view str) {
  size_t p = 0, s = 0;
  bool have_back = false;
  size_t back_pat = 0, back_str = 0;
  for (;;) {
    const unsigned char c = At(str, s++);
    unsigned char d = At(pat, p++);
    bool literal = false;
    bool backtrack = false;
    switch (d) {
      case '?':  // anything but the end
        if (c == '\0') return false;
        break;
      case '*':  // any length, zero included
        if (At(pat, p) == '\0') return true;
        have_back = true;
        back_pat = p;
        back_str = --s;
        break;
      case '[': {
        bool match = false;
        const bool inverted = At(pat, p) == '!';
        size_t cls = p + (inverted ? 1 : 0);
        unsigned char a = At(pat, cls++);
        bool malformed = false;
        do {
          unsigned char b = a;
          if (a == '\0') {
            malformed = true;
            break;
          }
          if (At(pat, cls) == '-' && At(pat, cls + 1) != ']') {
            b = At(pat, cls + 1);
            if (b == '\0') {
              malformed = true;
              break;
            }
            cls += 2;
          }
          match |= (a <= c && c <= b);
        } while ((a = At(pat, cls++)) != ']');
        if (malformed) {
          literal = true;
        } else if (match == inverted) {
          backtrack = true;
        } else {
          p = cls;
        }
        break;
      }
      case '\\':
        d = At(pat, p++);
        literal = true;
        break;
      default:
        literal = true;
    }
    if (literal) {
      if (c == d) {
        if (d == '\0') return true;
        continue;
      }
      backtrack = true;
    }
    if (backtrack) {
      if (c == '\0' || !have_back) return false;
      // Again from the last '*', one character later in the text.
      p = back_pat;
      s = ++back_str;
    }
  }
}

absl::StatusOr<FtraceFilter> FtraceFilter::Parse(absl::string_view text) {
  FtraceFilter f;
  f.text_ = std::string(absl::StripAsciiWhitespace(text));
  if (f.text_.empty()) return absl::InvalidArgumentError("empty filter");
  if (text.size() > kMaxFilterBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("longer than ", kMaxFilterBytes, " bytes"));
  }
  for (char c : text) {
    if (absl::ascii_iscntrl(c) && !absl::ascii_isspace(c)) {
      return absl::InvalidArgumentError("control character in the filter");
    }
  }
  for (absl::string_view tok :
       absl::StrSplit(f.text_, absl::ByAnyChar(" \t\n\r"), absl::SkipEmpty())) {
    const bool exclude = absl::ConsumePrefix(&tok, "!");
    Token t;
    std::vector<absl::string_view> parts = absl::StrSplit(tok, ':');
    t.function = std::string(parts[0]);
    if (parts.size() == 3 && parts[1] == "mod") {
      if (parts[2].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", tok, "': :mod: without a module"));
      }
      t.module = std::string(parts[2]);
      t.has_module = true;
    } else if (parts.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", tok,
                       "': only FUNCTION and FUNCTION:mod:MODULE are counted "
                       "(no other :command)"));
    }
    if (t.function.empty() && !t.has_module) {
      return absl::InvalidArgumentError(absl::StrCat("'", tok, "': empty"));
    }
    Classify(&t);
    (exclude ? f.exclude_ : f.include_).push_back(std::move(t));
  }
  if (f.include_.empty()) {
    return absl::InvalidArgumentError(
        "only '!' patterns: nothing selected (ftrace would then trace every "
        "function; give '*' for that)");
  }
  return f;
}

void FtraceFilter::Classify(Token* t) {
  absl::string_view f = t->function;
  if (f.find_first_of("?[\\") != absl::string_view::npos) return;  // kGlob
  const bool lead = absl::ConsumePrefix(&f, "*");
  const bool trail = absl::ConsumeSuffix(&f, "*");
  if (f.find('*') != absl::string_view::npos) return;  // "a*b": kGlob
  t->literal = std::string(f);
  t->match = lead && trail ? Match::kMiddle
             : lead        ? Match::kSuffix
             : trail       ? Match::kPrefix
                           : Match::kExact;
}

bool FtraceFilter::TokenMatches(const Token& t, absl::string_view name,
                                absl::string_view module) {
  if (t.has_module && (module.empty() || !GlobMatch(t.module, module))) {
    return false;
  }
  if (t.function.empty()) return true;  // ":mod:M": all of M
  switch (t.match) {
    case Match::kExact:
      return name == t.literal;
    case Match::kPrefix:
      return absl::StartsWith(name, t.literal);
    case Match::kSuffix:
      return absl::EndsWith(name, t.literal);
    case Match::kMiddle:
      return absl::StrContains(name, t.literal);
    default:
      return GlobMatch(t.function, name);
  }
}

std::optional<FtraceFilter::Simple> FtraceFilter::simple() const {
  if (include_.size() != 1 || !exclude_.empty()) return std::nullopt;
  const Token& t = include_[0];
  if (t.has_module || (t.match != Match::kExact && t.match != Match::kPrefix)) {
    return std::nullopt;
  }
  return Simple{t.literal, t.match == Match::kPrefix};
}

bool FtraceFilter::Matches(absl::string_view name,
                           absl::string_view module) const {
  bool in = false;
  for (const Token& t : include_) {
    if (TokenMatches(t, name, module)) {
      in = true;
      break;
    }
  }
  if (!in) return false;
  for (const Token& t : exclude_) {
    if (TokenMatches(t, name, module)) return false;
  }
  return true;
}

}  // namespace tracehealth::agent
