#include "server/alerts/annotation_template.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracehealth {
namespace {

std::string Num(double v) { return absl::StrFormat("%.4g", v); }
std::string Percent(double ratio) {
  return absl::StrCat(absl::StrFormat("%.3g", ratio * 100), "%");
}

}  // namespace

absl::StatusOr<AnnotationTemplate> AnnotationTemplate::Parse(
    absl::string_view text) {
  AnnotationTemplate t;
  t.text_ = std::string(text);
  absl::string_view rest = text;
  while (!rest.empty()) {
    const size_t open = rest.find("{{");
    if (open != 0) {
      Segment lit;
      lit.text = std::string(rest.substr(0, open));
      t.segments_.push_back(std::move(lit));
      if (open == absl::string_view::npos) break;
      rest.remove_prefix(open);
    }
    const size_t close = rest.find("}}");
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unterminated placeholder in \"", text, "\""));
    }
    const absl::string_view whole = rest.substr(0, close + 2);
    absl::string_view inner =
        absl::StripAsciiWhitespace(rest.substr(2, close - 2));
    rest.remove_prefix(close + 2);
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(why, " ", whole));
    };
    Segment seg;
    const size_t bar = inner.find('|');
    if (bar != absl::string_view::npos) {
      const absl::string_view filter =
          absl::StripAsciiWhitespace(inner.substr(bar + 1));
      if (filter != "percent") return bad("unknown filter in");
      seg.percent = true;
      inner = absl::StripAsciiWhitespace(inner.substr(0, bar));
    }
    if (inner == "host") {
      seg.kind = Kind::kHost;
    } else if (inner == "rule") {
      seg.kind = Kind::kRule;
    } else if (inner == "severity") {
      seg.kind = Kind::kSeverity;
    } else if (inner == "value") {
      seg.kind = Kind::kValue;
    } else if (inner == "threshold") {
      seg.kind = Kind::kThreshold;
    } else if (absl::StartsWith(inner, "label.") && inner.size() > 6) {
      seg.kind = Kind::kLabel;
      seg.text = std::string(inner.substr(6));
    } else if (absl::StartsWith(inner, "report.") && inner.size() > 7) {
      seg.kind = Kind::kReport;
      const absl::string_view path = inner.substr(7);
      // host.* are times since the last report, not fields of it.
      if (absl::StartsWith(path, "host.")) return bad("not a report field in");
      // A condition that only names the field: its first value is read.
      absl::StatusOr<Condition> field =
          Condition::Parse(absl::StrCat(path, " increased"));
      if (!field.ok()) {
        return bad(absl::StrCat("bad report field (", field.status().message(),
                                ") in"));
      }
      seg.field = std::make_shared<const Condition>(*std::move(field));
    } else {
      return bad("unknown placeholder");
    }
    const bool text_kind = seg.kind == Kind::kHost || seg.kind == Kind::kRule ||
                           seg.kind == Kind::kSeverity ||
                           seg.kind == Kind::kLabel;
    if (seg.percent && text_kind) return bad("percent of a text in");
    t.segments_.push_back(std::move(seg));
  }
  return t;
}

std::string AnnotationTemplate::Expand(const AnnotationContext& c) const {
  std::string out;
  auto number = [&](const Segment& s, double v) {
    absl::StrAppend(&out, s.percent ? Percent(v) : Num(v));
  };
  for (const Segment& s : segments_) {
    switch (s.kind) {
      case Kind::kLiteral:
        out += s.text;
        break;
      case Kind::kHost:
        out += c.host;
        break;
      case Kind::kRule:
        out += c.rule;
        break;
      case Kind::kSeverity:
        out += c.severity;
        break;
      case Kind::kValue:
        number(s, c.value);
        break;
      case Kind::kThreshold:
        number(s, c.threshold);
        break;
      case Kind::kLabel:
        if (c.labels != nullptr) {
          auto it = c.labels->find(s.text);
          if (it != c.labels->end()) out += it->second;
        }
        break;
      case Kind::kReport: {
        std::optional<double> v;
        if (c.report != nullptr) {
          EvalInput in;
          in.report = c.report;
          v = s.field->Evaluate(in).value;
        }
        if (v.has_value()) {
          number(s, *v);
        } else {
          out += "unknown";
        }
        break;
      }
    }
  }
  return out;
}

}  // namespace tracehealth
