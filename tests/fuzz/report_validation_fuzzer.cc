// Fuzzes ingest validation on arbitrary bytes, as they arrive on the wire:
// the head is decoded and the report validated without parsing it. Bytes
// that pass (or are only rejected for their values) must parse with
// protobuf and name the same host and seq: the server stores reports it
// has not parsed.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/host_identity.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/ingest/validate.h"
#include "server/report/report_head.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view wire(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tracehealth::server::ReportHead> head =
      tracehealth::server::DecodeReportHead(wire);
  if (!head.ok()) return 0;
  tracehealth::server::ValidationLimits limits;
  absl::Status s = tracehealth::server::ValidateReport(
      *head, wire, absl::FromUnixSeconds(1764000000), limits);
  if (absl::IsDataLoss(s)) return 0;
  tracehealth::v1::HostReport report;
  FUZZ_CHECK(report.ParseFromArray(data, static_cast<int>(size)));
  FUZZ_CHECK(head->host_id == report.host_id());
  FUZZ_CHECK(head->seq == report.seq());
  if (s.ok()) {
    FUZZ_CHECK(tracehealth::IsValidHostId(report.host_id()));
    FUZZ_CHECK(report.seq() > 0);
  }
  return 0;
}
