#include "server/alerts/rules.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace tracehealth {
namespace {

bool ValidName(absl::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  if (!absl::ascii_isalpha(s[0]) && s[0] != '_') return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

absl::Status StringMap(const YAML::Node& node, absl::string_view what,
                       std::map<std::string, std::string>* out) {
  if (!node) return absl::OkStatus();
  if (!node.IsMap())
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a map"));
  for (const auto& kv : node) {
    if (!kv.second.IsScalar()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " values must be strings"));
    }
    (*out)[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<AlertRule>> ParseAlertRules(absl::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("alert rules: ", e.what()));
  }
  if (!root.IsMap() || !root["rules"] || !root["rules"].IsSequence()) {
    return absl::InvalidArgumentError(
        "alert rules: want a top-level `rules:` list");
  }
  std::vector<AlertRule> rules;
  std::set<std::string> names;
  int index = 0;
  try {
    for (const YAML::Node& r : root["rules"]) {
      ++index;
      std::string label = absl::StrCat("rule #", index);
      auto bad = [&](absl::string_view why) {
        return absl::InvalidArgumentError(
            absl::StrCat("alert rules: ", label, ": ", why));
      };
      if (!r.IsMap()) return bad("not a map");
      if (!r["name"] || !r["name"].IsScalar()) return bad("missing name");
      std::string name = r["name"].as<std::string>();
      label = name;
      if (!ValidName(name))
        return bad("name must match [A-Za-z_][A-Za-z0-9_]*");
      if (!names.insert(name).second) return bad("duplicate name");
      if (!r["condition"] || !r["condition"].IsScalar())
        return bad("missing condition");
      absl::StatusOr<Condition> cond =
          Condition::Parse(r["condition"].as<std::string>());
      if (!cond.ok()) return bad(cond.status().message());
      AlertRule rule{
          name, *std::move(cond), absl::ZeroDuration(), "warning", {}, {}};
      if (r["for"]) {
        if (!absl::ParseDuration(r["for"].as<std::string>(),
                                 &rule.for_duration) ||
            rule.for_duration < absl::ZeroDuration()) {
          return bad("`for` is not a duration like 30s, 5m, 1h");
        }
      }
      if (r["severity"]) rule.severity = r["severity"].as<std::string>();
      absl::Status s = StringMap(r["labels"], "labels", &rule.labels);
      if (!s.ok()) return bad(s.message());
      for (const char* reserved : {"alertname", "host", "severity"}) {
        if (rule.labels.count(reserved) != 0) {
          return bad(
              absl::StrCat("label `", reserved, "` is set by the server"));
        }
      }
      std::map<std::string, std::string> annotations;
      s = StringMap(r["annotations"], "annotations", &annotations);
      if (!s.ok()) return bad(s.message());
      for (const auto& [key, text] : annotations) {
        absl::StatusOr<AnnotationTemplate> t = AnnotationTemplate::Parse(text);
        if (!t.ok()) {
          return bad(
              absl::StrCat("annotation ", key, ": ", t.status().message()));
        }
        rule.annotations.emplace(key, *std::move(t));
      }
      rules.push_back(std::move(rule));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("alert rules: ", e.what()));
  }
  return rules;
}

}  // namespace tracehealth
