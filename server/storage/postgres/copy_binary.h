// Builds the data of COPY ... FROM STDIN (FORMAT binary): a header, one
// tuple per row (a field count, then each field as a 32-bit length and its
// bytes, -1 for NULL), and a trailer, every number in network byte order
// (PostgreSQL's "COPY" page, "Binary Format").
//
// Thread safety: a plain value.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_COPY_BINARY_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_COPY_BINARY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

class CopyBinary {
 public:
  CopyBinary();  // writes the header

  // Starts a tuple of `fields` fields; exactly that many Add* calls follow.
  void BeginRow(int16_t fields);
  void AddBytes(absl::string_view v);  // text, bytea
  void AddInt8(int64_t v);             // bigint
  void AddInt4(int32_t v);             // integer
  void AddFloat8(double v);            // double precision
  void AddOptFloat8(const std::optional<double>& v);
  void AddNull();

  // The data with its trailer; call once, after the last row.
  std::string Finish();

 private:
  void Put16(uint16_t v);
  void Put32(uint32_t v);
  void Put64(uint64_t v);
  std::string out_;
};

// The COPY statement of the reports table, and one of its rows (`seq`
// stands for row.seq, so a benchmark can reuse a row).
inline constexpr char kCopyReports[] =
    "COPY reports (host_id, seq, observed_at_ns, received_at_ns, worst_risk, "
    "attach_latency_seconds, pool_budget_ratio, purge_seconds, report, "
    "record) FROM "
    "STDIN (FORMAT binary)";
void AddReportRow(CopyBinary& copy, const ReportRow& row, int64_t seq);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_COPY_BINARY_H_
