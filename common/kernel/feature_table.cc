#include "common/kernel/feature_table.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "yaml-cpp/yaml.h"

namespace tracehealth {

// Defined in the generated features_builtin.cc (the text of features.yaml).
extern const char kBuiltinFeaturesYaml[];

std::string FeatureRow::ToString() const {
  std::string out = absl::StrCat(
      name, ": since ", since ? since->Version() : std::string("never"));
  for (const KernelRelease& b : backports) {
    absl::StrAppend(&out, "; ", b.major, ".", b.minor, ".y from ", b.Version());
  }
  return out;
}

absl::StatusOr<FeatureRow> MakeFeatureRow(
    absl::string_view name, absl::string_view description,
    absl::string_view since, const std::vector<std::string>& backports) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("feature table row ", name, ": ", why));
  };
  if (name.empty()) return bad("no name");
  FeatureRow row;
  row.name = std::string(name);
  row.description = std::string(description);
  if (since != "never") {
    absl::StatusOr<KernelRelease> r = ParseKernelRelease(since);
    if (!r.ok()) return bad(r.status().message());
    row.since = *r;
  }
  for (const std::string& b : backports) {
    absl::StatusOr<KernelRelease> r = ParseKernelRelease(b);
    if (!r.ok()) return bad(r.status().message());
    row.backports.push_back(*r);
  }
  return row;
}

absl::StatusOr<FeatureTable> FeatureTable::Parse(absl::string_view yaml) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("feature table: ", e.what()));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        "feature table: the document is not a map");
  }
  YAML::Node features = root["features"];
  if (!features || !features.IsMap()) {
    return absl::InvalidArgumentError("feature table: no `features:` map");
  }
  FeatureTable table;
  try {
    for (const auto& entry : features) {
      const std::string name = entry.first.as<std::string>();
      const YAML::Node& body = entry.second;
      auto bad = [&](absl::string_view why) {
        return absl::InvalidArgumentError(
            absl::StrCat("feature table row ", name, ": ", why));
      };
      if (!body.IsMap()) return bad("not a map");
      if (!body["since"]) return bad("missing `since`");
      std::vector<std::string> backports;
      if (const YAML::Node& bp = body["backports"]) {
        if (!bp.IsSequence()) return bad("`backports` is not a list");
        for (const auto& b : bp) backports.push_back(b.as<std::string>());
      }
      absl::StatusOr<FeatureRow> row = MakeFeatureRow(
          name,
          body["description"] ? body["description"].as<std::string>() : "",
          body["since"].as<std::string>(), backports);
      if (!row.ok()) return row.status();
      table.rows_[name] = *std::move(row);
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("feature table: ", e.what()));
  }
  return table;
}

const FeatureTable& FeatureTable::Builtin() {
  static const FeatureTable* const kTable = [] {
    absl::StatusOr<FeatureTable> t = Parse(kBuiltinFeaturesYaml);
    // The built-in table is tested; a broken one is a build defect.
    if (!t.ok()) std::abort();
    return new FeatureTable(*std::move(t));
  }();
  return *kTable;
}

absl::StatusOr<FeatureTable> FeatureTable::WithOverride(
    absl::string_view override_yaml) {
  absl::StatusOr<FeatureTable> over = Parse(override_yaml);
  if (!over.ok()) return over.status();
  FeatureTable merged = Builtin();
  for (auto& [name, row] : over->rows_) merged.rows_[name] = row;
  return merged;
}

FeatureTable FeatureTable::BuiltinWith(const std::vector<FeatureRow>& rows) {
  FeatureTable merged = Builtin();
  for (const FeatureRow& row : rows) merged.rows_[row.name] = row;
  return merged;
}

absl::StatusOr<FeatureAnswer> FeatureTable::Query(
    absl::string_view feature, const KernelRelease& release) const {
  auto it = rows_.find(std::string(feature));
  if (it == rows_.end()) {
    return absl::NotFoundError(absl::StrCat("no feature table row ", feature));
  }
  const FeatureRow& row = it->second;
  FeatureAnswer answer;
  std::string why;
  if (row.since && release >= *row.since) {
    answer.present = true;
    why = "yes";
  } else {
    for (const KernelRelease& b : row.backports) {
      if (release.SameBranch(b) && release >= b) {
        answer.present = true;
        why = absl::StrCat("yes (", b.major, ".", b.minor, ".y backport)");
        break;
      }
    }
    if (!answer.present) why = "no";
  }
  answer.row =
      absl::StrCat(row.ToString(), " -> ", release.Version(), ": ", why);
  return answer;
}

FeatureAnswer FeatureTable::Has(absl::string_view feature,
                                const KernelRelease& release) const {
  absl::StatusOr<FeatureAnswer> a = Query(feature, release);
  if (a.ok()) return *a;
  return FeatureAnswer{false, std::string(a.status().message())};
}

}  // namespace tracehealth
