// StoredReport: a committed report as the server keeps it in memory: its
// identity plus the wire bytes, parsed into a v1::HostReport the first time
// someone reads it.
//
// Ingest checks the bytes (CheckReportWire), decodes the few fields it
// needs (DecodeReportHead) and parses the report once, to build its stored
// record (server/ingest/report_row.h); that parse is handed on here (the
// second constructor), so the post-commit steps do not parse it again. A
// report read back from the store is parsed when first read; once parsed,
// the bytes are dropped.
//
// Thread safety: immutable to its users; report() may be called from any
// number of threads (the first call parses, the others wait for it).
#ifndef TRACEHEALTH_SERVER_REPORT_STORED_REPORT_H_
#define TRACEHEALTH_SERVER_REPORT_STORED_REPORT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/call_once.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {

class StoredReport {
 public:
  // `blob` is the serialized report named by host_id and seq.
  StoredReport(std::string host_id, uint64_t seq, std::string blob);
  // A report someone has parsed already (ingest, for its stored record):
  // `parsed` is never null.
  StoredReport(std::string host_id, uint64_t seq,
               std::shared_ptr<const v1::HostReport> parsed);
  StoredReport(const StoredReport&) = delete;
  StoredReport& operator=(const StoredReport&) = delete;

  // Serializes `report` (tests and tools that hold a parsed report).
  static std::shared_ptr<const StoredReport> Of(const v1::HostReport& report);

  const std::string& host_id() const { return host_id_; }
  uint64_t seq() const { return seq_; }

  // The parsed report, never null; shared, so it outlives this object as
  // long as the caller holds it. Bytes that do not parse (only possible if
  // the store was altered; ingest checks every report) give a report with
  // just host_id and seq.
  std::shared_ptr<const v1::HostReport> report() const;

 private:
  const std::string host_id_;
  const uint64_t seq_;
  mutable absl::once_flag parse_once_;
  mutable std::string blob_;  // cleared once parsed
  mutable std::shared_ptr<const v1::HostReport> parsed_;
};

// The report of `blob`, parsed into an arena it shares ownership of; bytes
// that do not parse give a report with just host_id and seq (`*parsed`, when
// given, says which).
std::shared_ptr<const v1::HostReport> ParseStoredReport(
    const std::string& host_id, uint64_t seq, const std::string& blob,
    bool* parsed = nullptr);

// A copy of `report` in an arena it shares ownership of, as
// ParseStoredReport makes them (`wire_size`: about its encoded size).
std::shared_ptr<v1::HostReport> CopyStoredReport(const v1::HostReport& report,
                                                 size_t wire_size);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_REPORT_STORED_REPORT_H_
