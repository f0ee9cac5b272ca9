#include "common/kernel/feature_table_override.h"

#include <openssl/evp.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tracehealth {
std::string Sha256Digest(absl::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  return absl::StrCat("sha256:", absl::BytesToHexString(absl::string_view(
                                     reinterpret_cast<const char*>(md), len)));
}

absl::StatusOr<v1::FeatureTableOverride> FeatureTableOverrideOf(
    absl::string_view yaml) {
  absl::StatusOr<FeatureTable> rows = FeatureTable::Parse(yaml);
  if (!rows.ok()) return rows.status();
  v1::FeatureTableOverride o;
  o.set_digest(Sha256Digest(yaml));
  for (const auto& [name, row] : rows->rows()) {
    const FeatureRowText text = FeatureRowTextOf(row);
    v1::FeatureRow* r = o.add_rows();
    r->set_name(text.name);
    r->set_description(text.description);
    r->set_since(text.since);
    for (const std::string& b : text.backports) r->add_backports(b);
    r->set_source(text.source);
    r->set_confidence(text.confidence);
    for (const auto& [arch, releases] : text.arches) {
      v1::ArchReleases* a = r->add_arches();
      a->set_arch(arch);
      a->set_since(releases.first);
      for (const std::string& b : releases.second) a->add_backports(b);
    }
  }
  return o;
}

absl::StatusOr<FeatureTable> FeatureTableFromOverride(
    const v1::FeatureTableOverride& o) {
  std::vector<FeatureRow> rows;
  rows.reserve(o.rows_size());
  for (const v1::FeatureRow& r : o.rows()) {
    FeatureRowText text;
    text.name = r.name();
    text.description = r.description();
    text.since = r.since();
    text.backports.assign(r.backports().begin(), r.backports().end());
    text.source = r.source();
    text.confidence = r.confidence();
    for (const v1::ArchReleases& a : r.arches()) {
      auto& releases = text.arches[a.arch()];
      releases.first = a.since();
      releases.second.assign(a.backports().begin(), a.backports().end());
    }
    absl::StatusOr<FeatureRow> row = MakeFeatureRow(text);
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  return FeatureTable::BuiltinWith(rows);
}

}  // namespace tracehealth
