// AlertStore: the server's durable store of alerts (the alert engine writes
// them; queries list them; a restart restores the pending and firing ones).
//
// One of the two interfaces a storage backend implements (the other is
// ReportStore, report_store.h); server/storage/conformance/ holds the
// contract tests every backend passes.
//
// Thread safety: implementations are safe to call from several threads.
#ifndef TRACEHEALTH_SERVER_STORAGE_ALERT_STORE_H_
#define TRACEHEALTH_SERVER_STORAGE_ALERT_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tracehealth::server {

// One alert. Times are Unix nanoseconds.
struct AlertRow {
  std::string rule;
  std::string host_id;
  int state = 0;  // tracehealth.v1.AlertState
  std::string severity;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  double value = 0;
  int64_t active_since_ns = 0;
  std::optional<int64_t> fired_at_ns;
  std::optional<int64_t> resolved_at_ns;
};

struct AlertFilter {
  // Empty: pending and firing.
  std::vector<int> states;
  std::string host_id;    // empty: every host
  uint32_t limit = 1000;  // 0: 1000
};

class AlertStore {
 public:
  virtual ~AlertStore() = default;

  // Inserts or replaces the alert keyed by (rule, host_id, active_since).
  virtual absl::Status PutAlert(const AlertRow& alert) = 0;

  // The alerts matching `filter`, newest active_since first (ties by rule,
  // then host_id), at most `filter.limit` of them.
  virtual absl::StatusOr<std::vector<AlertRow>> ListAlerts(
      const AlertFilter& filter) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_ALERT_STORE_H_
