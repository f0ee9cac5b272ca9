// The PostgreSQL store's alerts: AlertStore and AlertTransitions as SQL on
// a connection. Labels and annotations are stored as JSON objects
// (labels_json.h).
//
// Thread safety: the functions use only the connection passed in, which
// the caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_ALERTS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_ALERTS_H_

#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/alert_store.h"
#include "server/storage/alert_transitions.h"
#include "server/storage/postgres/pg_connection.h"

namespace tracehealth::server {

// Inserts or replaces the row keyed by (rule, host_id, active_since_ns).
absl::Status PgPutAlert(PgConnection& conn, const AlertRow& alert);

absl::StatusOr<std::vector<AlertRow>> PgListAlerts(PgConnection& conn,
                                                   const AlertFilter& filter);

// One transaction under an advisory lock of (rule, host) held until it
// ends (a transaction lock, so it works through PgBouncer too).
absl::StatusOr<TransitionResult> PgTransitionAlert(
    PgConnection& conn, const std::optional<AlertEpisode>& expected,
    const AlertRow& next);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_ALERTS_H_
