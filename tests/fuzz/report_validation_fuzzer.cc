// Fuzzes ingest validation on arbitrary bytes, as they arrive on the wire:
// the head is decoded and the report validated without parsing it. Bytes
// that pass (or are only rejected for their values) must parse with
// protobuf and name the same host and seq: the server stores reports it
// has not parsed. The one walk ingest runs (ScanReport) must answer as the
// head decoder, the validation and the material content alone.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/host_identity.h"
#include "common/report/material.h"
#include "common/report/report_scan.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/ingest/validate.h"
#include "server/report/report_head.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view wire(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tracehealth::server::ReportHead> head =
      tracehealth::server::DecodeReportHead(wire);
  tracehealth::server::ValidationLimits limits;
  const tracehealth::ReportScan scan =
      tracehealth::ScanReport(wire, tracehealth::server::WireLimitsOf(limits));
  FUZZ_CHECK(scan.head_status == head.status());
  if (!head.ok()) return 0;
  FUZZ_CHECK(scan.head.host_id == head->host_id);
  FUZZ_CHECK(scan.head.seq == head->seq);
  FUZZ_CHECK(scan.head.labels == head->labels);
  FUZZ_CHECK(scan.head.attach_kinds == head->attach_kinds);
  FUZZ_CHECK(scan.head.heartbeat_base_seq == head->heartbeat_base_seq);
  FUZZ_CHECK(scan.head.threads_total == head->threads_total);
  const absl::Time now = absl::FromUnixSeconds(1764000000);
  absl::Status s =
      tracehealth::server::ValidateReport(*head, wire, now, limits);
  FUZZ_CHECK(
      tracehealth::server::ValidateScannedReport(scan, size, now, limits) == s);
  if (scan.check.ok()) {
    const tracehealth::Material m = tracehealth::MaterialOfWire(wire);
    FUZZ_CHECK(scan.material.digest == m.digest);
    FUZZ_CHECK(scan.material.numbers == m.numbers);
  }
  if (absl::IsDataLoss(s)) return 0;
  tracehealth::v1::HostReport report;
  FUZZ_CHECK(report.ParseFromArray(data, static_cast<int>(size)));
  FUZZ_CHECK(head->host_id == report.host_id());
  FUZZ_CHECK(head->seq == report.seq());
  // What ingest takes for the row's and a heartbeat's threads.
  FUZZ_CHECK(head->threads_total.has_value() ==
             report.snapshot().threads().has_total());
  FUZZ_CHECK(head->threads_total.value_or(0) ==
             report.snapshot().threads().total());
  if (s.ok()) {
    FUZZ_CHECK(tracehealth::IsValidHostId(report.host_id()));
    FUZZ_CHECK(report.seq() > 0);
  }
  return 0;
}
