// Fuzzes ingest validation: arbitrary bytes decoded as a HostReport (as
// they would arrive on the wire), then validated.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/ingest/validate.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tracehealth::v1::HostReport report;
  if (!report.ParseFromArray(data, static_cast<int>(size))) return 0;
  tracehealth::server::ValidationLimits limits;
  const absl::string_view wire(reinterpret_cast<const char*>(data), size);
  absl::Status s = tracehealth::server::ValidateReport(
      report, wire, absl::FromUnixSeconds(1764000000), limits);
  if (s.ok()) {
    FUZZ_CHECK(tracehealth::server::IsValidHostId(report.host_id()));
    FUZZ_CHECK(report.seq() > 0);
  }
  return 0;
}
