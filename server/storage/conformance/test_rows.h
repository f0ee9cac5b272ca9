// Report rows for storage tests (tests only).
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_TEST_ROWS_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_TEST_ROWS_H_

#include <cstdint>
#include <string>

#include "server/storage/report_store.h"

namespace tracehealth::server {

// A row of `host` and `seq` observed at `observed_ns` and received 1 ns
// later, worst risk 2, attach latency 1.5 s, whose blob is `blob` followed
// by the seq in decimal ("blob7" for seq 7).
inline ReportRow TestRow(const std::string& host, uint64_t seq,
                         int64_t observed_ns,
                         const std::string& blob = "blob") {
  ReportRow r;
  r.host_id = host;
  r.seq = seq;
  r.observed_at_ns = observed_ns;
  r.received_at_ns = observed_ns + 1;
  r.worst_risk = 2;
  r.attach_latency_seconds = 1.5;
  r.blob = blob + std::to_string(seq);
  return r;
}

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_TEST_ROWS_H_
