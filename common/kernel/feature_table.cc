#include "common/kernel/feature_table.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "yaml-cpp/yaml.h"

namespace tracehealth {

// Defined in the generated features_builtin.cc (the text of features.yaml).
extern const char kBuiltinFeaturesYaml[];

namespace {

void AppendReleases(const FeatureReleases& r, std::string* out) {
  absl::StrAppend(out, "since ",
                  r.since ? r.since->Version() : std::string("never"));
  for (const KernelRelease& b : r.backports) {
    absl::StrAppend(out, "; ", b.major, ".", b.minor, ".y from ", b.Version());
  }
}

absl::StatusOr<FeatureReleases> MakeReleases(
    absl::string_view since, const std::vector<std::string>& backports) {
  FeatureReleases r;
  if (since != "never") {
    absl::StatusOr<KernelRelease> parsed = ParseKernelRelease(since);
    if (!parsed.ok()) return parsed.status();
    r.since = *parsed;
  }
  for (const std::string& b : backports) {
    absl::StatusOr<KernelRelease> parsed = ParseKernelRelease(b);
    if (!parsed.ok()) return parsed.status();
    r.backports.push_back(*parsed);
  }
  return r;
}

std::string Written(const KernelRelease& r) { return r.ToString(); }

std::pair<std::string, std::vector<std::string>> WrittenReleases(
    const FeatureReleases& r) {
  std::pair<std::string, std::vector<std::string>> out;
  out.first = r.since ? Written(*r.since) : "never";
  for (const KernelRelease& b : r.backports) out.second.push_back(Written(b));
  return out;
}

// A YAML list of release strings; InvalidArgument when it is not a list.
absl::Status ReadList(const YAML::Node& node, std::vector<std::string>* out) {
  if (!node) return absl::OkStatus();
  if (!node.IsSequence())
    return absl::InvalidArgumentError("`backports` is not a list");
  for (const auto& b : node) out->push_back(b.as<std::string>());
  return absl::OkStatus();
}

// One row's body, as written. Errors name the problem, not the row.
absl::Status ReadRowText(const YAML::Node& body, FeatureRowText* t) {
  if (!body.IsMap()) return absl::InvalidArgumentError("not a map");
  if (!body["since"]) return absl::InvalidArgumentError("missing `since`");
  t->since = body["since"].as<std::string>();
  if (body["description"])
    t->description = body["description"].as<std::string>();
  if (body["source"]) t->source = body["source"].as<std::string>();
  if (body["confidence"]) t->confidence = body["confidence"].as<std::string>();
  absl::Status st = ReadList(body["backports"], &t->backports);
  if (!st.ok()) return st;
  if (const YAML::Node& arches = body["arches"]) {
    if (!arches.IsMap())
      return absl::InvalidArgumentError("`arches` is not a map");
    for (const auto& entry : arches) {
      const YAML::Node& a = entry.second;
      if (!a.IsMap() || !a["since"]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "arch ", entry.first.as<std::string>(), ": missing `since`"));
      }
      auto& releases = t->arches[entry.first.as<std::string>()];
      releases.first = a["since"].as<std::string>();
      st = ReadList(a["backports"], &releases.second);
      if (!st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string NormalizeArch(absl::string_view arch) {
  const std::string a = absl::AsciiStrToLower(absl::StripAsciiWhitespace(arch));
  if (a == "arm64") return "aarch64";
  if (a == "amd64" || a == "x86-64") return "x86_64";
  return a;
}

const FeatureReleases& FeatureRow::For(absl::string_view arch) const {
  if (!arch.empty()) {
    auto it = arches.find(NormalizeArch(arch));
    if (it != arches.end()) return it->second;
  }
  return releases;
}

std::string FeatureRow::ToString(absl::string_view arch) const {
  std::string out = name;
  const std::string a = arch.empty() ? "" : NormalizeArch(arch);
  const bool own = !a.empty() && arches.count(a) > 0;
  if (own) absl::StrAppend(&out, " [", a, "]");
  absl::StrAppend(&out, ": ");
  AppendReleases(For(a), &out);
  return out;
}

absl::StatusOr<FeatureRow> MakeFeatureRow(const FeatureRowText& text) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("feature table row ", text.name, ": ", why));
  };
  if (text.name.empty()) return bad("no name");
  FeatureRow row;
  row.name = text.name;
  row.description = text.description;
  row.source = text.source;
  if (text.confidence == "inferred") {
    row.inferred = true;
  } else if (!text.confidence.empty() && text.confidence != "verified") {
    return bad(absl::StrCat("confidence must be verified or inferred, not ",
                            text.confidence));
  }
  absl::StatusOr<FeatureReleases> releases =
      MakeReleases(text.since, text.backports);
  if (!releases.ok()) return bad(releases.status().message());
  row.releases = *std::move(releases);
  for (const auto& [arch, written] : text.arches) {
    const std::string a = NormalizeArch(arch);
    if (a.empty()) return bad("an architecture without a name");
    absl::StatusOr<FeatureReleases> r =
        MakeReleases(written.first, written.second);
    if (!r.ok()) return bad(absl::StrCat(a, ": ", r.status().message()));
    row.arches[a] = *std::move(r);
  }
  return row;
}

FeatureRowText FeatureRowTextOf(const FeatureRow& row) {
  FeatureRowText t;
  t.name = row.name;
  t.description = row.description;
  t.source = row.source;
  t.confidence = row.inferred ? "inferred" : "verified";
  std::tie(t.since, t.backports) = WrittenReleases(row.releases);
  for (const auto& [arch, r] : row.arches) t.arches[arch] = WrittenReleases(r);
  return t;
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
      FeatureRowText text;
      text.name = entry.first.as<std::string>();
      absl::Status st = ReadRowText(entry.second, &text);
      if (!st.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("feature table row ", text.name, ": ", st.message()));
      }
      absl::StatusOr<FeatureRow> row = MakeFeatureRow(text);
      if (!row.ok()) return row.status();
      table.rows_[text.name] = *std::move(row);
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
    absl::string_view feature, const KernelRelease& release,
    absl::string_view arch) const {
  auto it = rows_.find(std::string(feature));
  if (it == rows_.end()) {
    return absl::NotFoundError(absl::StrCat("no feature table row ", feature));
  }
  const FeatureRow& row = it->second;
  const FeatureReleases& r = row.For(arch);
  FeatureAnswer answer;
  std::string why;
  if (r.since && release >= *r.since) {
    answer.present = true;
    why = "yes";
  } else {
    for (const KernelRelease& b : r.backports) {
      if (release.SameBranch(b) && release >= b) {
        answer.present = true;
        why = absl::StrCat("yes (", b.major, ".", b.minor, ".y backport)");
        break;
      }
    }
    if (!answer.present) why = "no";
  }
  // An inferred mainline release may be off by one: the branch named and
  // the one before it are the releases the answer could be wrong for.
  if (row.inferred && r.since && release.major == r.since->major &&
      (release.minor == r.since->minor ||
       release.minor + 1 == r.since->minor)) {
    answer.uncertain = true;
    absl::StrAppend(&why, ", release inferred");
  }
  answer.row =
      absl::StrCat(row.ToString(arch), " -> ", release.Version(), ": ", why);
  return answer;
}

FeatureAnswer FeatureTable::Has(absl::string_view feature,
                                const KernelRelease& release,
                                absl::string_view arch) const {
  absl::StatusOr<FeatureAnswer> a = Query(feature, release, arch);
  if (a.ok()) return *a;
  return FeatureAnswer{false, std::string(a.status().message())};
}

}  // namespace tracehealth
