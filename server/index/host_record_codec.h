// The stored form of a HostRecord (proto/tracehealth/v1/host_record.proto):
// written with each report (ReportRow::record) so that a restart loads every
// host's record without reading and parsing its report.
//
// A record is encoded from the report as stored, without any hardware
// class's calibration (the index prices it when it loads it, as it does a
// record made from the report). Decoding gives a record equal, field by
// field, to MakeHostRecord of that report (host_record_codec_test, and
// tests/server/record_predictions_test for every fixture host).
//
// Thread safety: free functions; the caches are thread-safe.
#ifndef TRACEHEALTH_SERVER_INDEX_HOST_RECORD_CODEC_H_
#define TRACEHEALTH_SERVER_INDEX_HOST_RECORD_CODEC_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/host_record.pb.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/index/host_record.h"
#include "server/index/kernel_identity.h"

namespace tracehealth::server {

// Bumped whenever the meaning of a StoredHostRecord field changes: records
// of another format are rebuilt from their reports.
inline constexpr uint32_t kHostRecordFormatVersion = 1;

// The stored record of `report`: MakeHostRecord's fields, the report's model
// version and feature-table override, made under this server's model
// version.
v1::StoredHostRecord ToStoredRecord(const v1::HostReport& report);
// The same into `*s` (cleared first).
void FillStoredRecord(const v1::HostReport& report, v1::StoredHostRecord* s);
// ToStoredRecord serialized.
std::string EncodeHostRecord(const v1::HostReport& report);

// The record stored as `bytes`, its feature table and identity shared
// through the caches. Errors: DataLoss when the bytes do not parse;
// FailedPrecondition for a record of another format or model version (the
// caller rebuilds it from the report).
absl::StatusOr<HostRecord> DecodeHostRecord(absl::string_view bytes,
                                            FeatureTableCache& tables,
                                            KernelIdentityCache* identities);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_HOST_RECORD_CODEC_H_
