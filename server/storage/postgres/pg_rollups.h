// Hourly rollups in the PostgreSQL store (schema 6; RollupRow,
// report_store.h; arithmetic server/storage/rollup.h): the rollups table,
// one row per (host, hour) keyed by (host_id, hour_start_ns) and indexed by
// hour (for their retention), and rollup_state, the one-row watermark
// (every hour before rolled_through_ns is rolled up). Not partitioned: 24
// small rows a host a day.
//
// A pass (PostgresStorage::RollUp) reads the reports and heartbeat chunks
// observed in its hours in single-row mode (PgFoldStoredHours: never the
// whole result in memory), then writes the rows and moves the watermark in
// one transaction (PgWriteRollups), which locks the watermark row and
// writes only if it is still the one the pass started from, so two
// replicas' passes never fold an hour twice.
//
// Thread safety: the functions use only the connection passed in, which the
// caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_ROLLUPS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_ROLLUPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/postgres/pg_connection.h"
#include "server/storage/report_store.h"
#include "server/storage/rollup.h"

namespace tracehealth::server {

// The stored watermark; nullopt when none was stored yet.
absl::StatusOr<std::optional<int64_t>> PgRollupWatermark(PgConnection& conn);

// The oldest observation time stored (reports and heartbeats); nullopt
// when nothing is stored.
absl::StatusOr<std::optional<int64_t>> PgOldestObservation(PgConnection& conn);

// Adds to `folder` every full report and heartbeat observed in
// [from_ns, to_ns): a full report's threads from its report, a heartbeat's
// risk from its full report (as ReadHostHistory gives them).
absl::Status PgFoldStoredHours(PgConnection& conn, int64_t from_ns,
                               int64_t to_ns, RollupFolder* folder);

// One transaction: Aborted (nothing written) unless the watermark is still
// `expected`; otherwise inserts `rows` (replacing any of the same host and
// hour) and sets the watermark to `rolled_through_ns`.
absl::Status PgWriteRollups(PgConnection& conn, std::optional<int64_t> expected,
                            int64_t rolled_through_ns,
                            const std::vector<RollupRow>& rows);

// ReportStore::ReadHostRollups.
absl::StatusOr<std::vector<RollupRow>> PgReadRollups(PgConnection& conn,
                                                     const std::string& host_id,
                                                     int64_t from_ns,
                                                     int64_t to_ns);

// ReportStore::DeleteRollupsBefore.
absl::StatusOr<int64_t> PgDeleteRollups(PgConnection& conn,
                                        int64_t hour_before_ns);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_ROLLUPS_H_
