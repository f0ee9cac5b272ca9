// An operator's feature-table override as a report carries it
// (HostReport.feature_table_override): the agent turns its --feature_table
// file into rows and a digest; the server turns them back into the table the
// agent's predictions were computed with, to explain them and to answer
// what-if queries for that host.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_KERNEL_FEATURE_TABLE_OVERRIDE_H_
#define TRACEHEALTH_COMMON_KERNEL_FEATURE_TABLE_OVERRIDE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kernel/feature_table.h"
#include "proto/tracehealth/v1/features.pb.h"

namespace tracehealth {

// The rows of an override file (the YAML form of features.yaml), in name
// order, and the digest of its bytes. Errors: FeatureTable::Parse's.
absl::StatusOr<v1::FeatureTableOverride> FeatureTableOverrideOf(
    absl::string_view yaml);

// The built-in table with the override's rows in place. Errors:
// InvalidArgument naming the row (an empty name, or a since/backport that is
// not a release).
absl::StatusOr<FeatureTable> FeatureTableFromOverride(
    const v1::FeatureTableOverride& o);

// "sha256:" and the lower-case hex SHA-256 of `bytes`.
std::string Sha256Digest(absl::string_view bytes);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_KERNEL_FEATURE_TABLE_OVERRIDE_H_
