#include "common/kernel/feature_table_override.h"

#include <openssl/evp.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tracehealth {
namespace {

// The written form of a release: what MakeFeatureRow parses back.
std::string Written(const KernelRelease& r) { return r.ToString(); }

}  // namespace

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
    v1::FeatureRow* r = o.add_rows();
    r->set_name(name);
    r->set_description(row.description);
    r->set_since(row.since ? Written(*row.since) : "never");
    for (const KernelRelease& b : row.backports) r->add_backports(Written(b));
  }
  return o;
}

absl::StatusOr<FeatureTable> FeatureTableFromOverride(
    const v1::FeatureTableOverride& o) {
  std::vector<FeatureRow> rows;
  rows.reserve(o.rows_size());
  for (const v1::FeatureRow& r : o.rows()) {
    absl::StatusOr<FeatureRow> row = MakeFeatureRow(
        r.name(), r.description(), r.since(),
        std::vector<std::string>(r.backports().begin(), r.backports().end()));
    if (!row.ok()) return row.status();
    rows.push_back(*std::move(row));
  }
  return FeatureTable::BuiltinWith(rows);
}

}  // namespace tracehealth
