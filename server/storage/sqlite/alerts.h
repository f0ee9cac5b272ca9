// The SQLite store's alerts table: AlertStore's two operations as SQL on a
// connection. Labels and annotations are stored as JSON objects.
//
// Thread safety: the functions use only the connection passed in, which
// the caller serializes (PutAlert, TransitionAlert: the write connection,
// ListAlerts: the read connection).
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_ALERTS_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_ALERTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/alert_store.h"
#include "server/storage/alert_transitions.h"

struct sqlite3;

namespace tracehealth::server {

// Inserts or replaces the row keyed by (rule, host_id, active_since_ns).
absl::Status PutAlertRow(sqlite3* db, const AlertRow& alert);

// AlertStore::ListAlerts.
absl::StatusOr<std::vector<AlertRow>> ListAlertRows(sqlite3* db,
                                                    const AlertFilter& filter);

// The alert of (rule, host_id) with the latest active_since, if any.
absl::StatusOr<std::optional<AlertRow>> CurrentAlertRow(
    sqlite3* db, const std::string& rule, const std::string& host_id);

// Deletes the row keyed by (rule, host_id, active_since_ns).
absl::Status DeleteAlertRow(sqlite3* db, const std::string& rule,
                            const std::string& host_id,
                            int64_t active_since_ns);

// AlertStore::TransitionAlert in one IMMEDIATE transaction on `db`: applies
// `next` only when the current episode is `expected` and the step is allowed
// (alert_transitions.h); rolls back on any error.
absl::StatusOr<TransitionResult> TransitionAlertRow(
    sqlite3* db, const std::optional<AlertEpisode>& expected,
    const AlertRow& next);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_ALERTS_H_
