#include "server/ingest/report_batch.h"

#include "absl/strings/str_cat.h"
#include "common/report/wire_reader.h"

namespace tracehealth::server {

absl::StatusOr<std::vector<absl::string_view>> SplitReportBatch(
    absl::string_view wire) {
  std::vector<absl::string_view> reports;
  absl::Status st =
      wire::ForEachField(wire, [&](const wire::Field& f) -> absl::Status {
        if (f.number != 1 || f.wire_type != wire::kLengthDelimited) {
          return absl::InvalidArgumentError(
              absl::StrCat("field ", f.number, " of wire type ", f.wire_type,
                           " (a batch holds only reports, field 1)"));
        }
        if (reports.size() == kMaxBatchReports) {
          return absl::InvalidArgumentError(absl::StrCat(
              "more than ", kMaxBatchReports, " reports in one batch"));
        }
        reports.push_back(f.bytes);
        return absl::OkStatus();
      });
  if (absl::IsDataLoss(st)) {
    return absl::InvalidArgumentError(st.message());
  }
  if (!st.ok()) return st;
  return reports;
}

}  // namespace tracehealth::server
