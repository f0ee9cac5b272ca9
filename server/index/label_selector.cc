#include "server/index/label_selector.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/escape.h"
#include "common/host_identity.h"
#include "re2/re2.h"

namespace tracehealth::server {
namespace {

// Splits on commas outside double quotes.
absl::StatusOr<std::vector<std::string>> SplitMatchers(absl::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && quoted && i + 1 < text.size()) {
      cur.push_back(c);
      cur.push_back(text[++i]);
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur.push_back(c);
  }
  if (quoted) {
    return absl::InvalidArgumentError(absl::StrCat(
        "selector: unterminated quote in \"", EchoText(text), "\""));
  }
  out.push_back(cur);
  return out;
}

bool IsQuoted(absl::string_view v) {
  return v.size() >= 2 && v.front() == '"' && v.back() == '"';
}

std::string Unquote(absl::string_view v) {
  if (IsQuoted(v)) {
    std::string out;
    for (size_t i = 1; i + 1 < v.size(); ++i) {
      if (v[i] == '\\' && i + 2 < v.size()) ++i;
      out.push_back(v[i]);
    }
    return out;
  }
  return std::string(v);
}

}  // namespace

absl::StatusOr<LabelSelector> LabelSelector::Parse(absl::string_view text) {
  LabelSelector sel;
  if (absl::StripAsciiWhitespace(text).empty()) return sel;
  auto parts = SplitMatchers(text);
  if (!parts.ok()) return parts.status();
  for (const std::string& raw : *parts) {
    absl::string_view part = absl::StripAsciiWhitespace(raw);
    if (part.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "selector: empty matcher (a leading, doubled or trailing comma) in "
          "\"",
          EchoText(text), "\""));
    }
    size_t pos = part.find_first_of("=!");
    if (pos == absl::string_view::npos || pos + 1 > part.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "selector: no operator (=, !=, =~, !~) in \"", EchoText(part), "\""));
    }
    Matcher m;
    m.key = std::string(absl::StripAsciiWhitespace(part.substr(0, pos)));
    absl::string_view rest = part.substr(pos);
    if (absl::StartsWith(rest, "=~")) {
      m.op = Op::kRe;
      rest.remove_prefix(2);
    } else if (absl::StartsWith(rest, "!~")) {
      m.op = Op::kNre;
      rest.remove_prefix(2);
    } else if (absl::StartsWith(rest, "!=")) {
      m.op = Op::kNe;
      rest.remove_prefix(2);
    } else if (absl::StartsWith(rest, "=")) {
      m.op = Op::kEq;
      rest.remove_prefix(1);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("selector: bad operator in \"", EchoText(part), "\""));
    }
    if (m.key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "selector: empty label name in \"", EchoText(part), "\""));
    }
    if (!IsValidLabelKey(m.key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("selector: bad label name \"", EchoText(m.key),
                       "\" (must match [A-Za-z_][A-Za-z0-9_]*)"));
    }
    const absl::string_view value = absl::StripAsciiWhitespace(rest);
    // "role==db" would be role = "=db": a mistyped operator, not a value.
    if (!IsQuoted(value) && !value.empty() &&
        (value.front() == '=' || value.front() == '!' ||
         value.front() == '~')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "selector: value \"", EchoText(value), "\" in \"", EchoText(part),
          "\" starts with an operator character (quote it if it is meant)"));
    }
    if (!IsQuoted(value) && value.find('"') != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("selector: stray quote in the value of \"",
                       EchoText(part), "\" (quote the whole value)"));
    }
    m.value = Unquote(value);
    if (m.op == Op::kRe || m.op == Op::kNre) {
      RE2::Options opts;
      opts.set_log_errors(false);
      // Compiled as given and matched with FullMatch (anchored at both
      // ends, as Prometheus anchors): wrapping it in "^(?:...)$" would let
      // a value like "a)|(b" parse as another, valid regex.
      auto re = std::make_shared<re2::RE2>(m.value, opts);
      if (!re->ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("selector: bad regex \"", EchoText(m.value),
                         "\": ", EchoText(re->error())));
      }
      m.re = std::move(re);
    }
    sel.matchers_.push_back(std::move(m));
  }
  return sel;
}

template <typename Lookup>
bool LabelSelector::MatchesWith(const Lookup& value) const {
  for (const Matcher& m : matchers_) {
    const absl::string_view v = value(m.key);
    switch (m.op) {
      case Op::kEq:
        if (v != m.value) return false;
        break;
      case Op::kNe:
        if (v == m.value) return false;
        break;
      case Op::kRe:
        if (!RE2::FullMatch(re2::StringPiece(v.data(), v.size()), *m.re))
          return false;
        break;
      case Op::kNre:
        if (RE2::FullMatch(re2::StringPiece(v.data(), v.size()), *m.re))
          return false;
        break;
    }
  }
  return true;
}

bool LabelSelector::Matches(
    const google::protobuf::Map<std::string, std::string>& labels) const {
  return MatchesWith([&labels](const std::string& key) {
    auto it = labels.find(key);
    return it == labels.end() ? absl::string_view()
                              : absl::string_view(it->second);
  });
}

bool LabelSelector::Matches(const LabelSet& labels) const {
  return MatchesWith([&labels](const std::string& key) {
    return labels.Find(key).value_or(absl::string_view());
  });
}

}  // namespace tracehealth::server
