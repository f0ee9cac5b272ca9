// The range partitions of the reports table: one per `span` of receive
// time, aligned to the Unix epoch, named reports_<start in Unix seconds>.
//
// Rows outside every range partition go to reports_default, so an insert
// never fails for want of a partition; partitions are created ahead of time
// (EnsurePartitions) so that it stays small.
//
// Thread safety: plain functions on a connection the caller owns.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_PARTITIONS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_PARTITIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/storage/postgres/pg_connection.h"

namespace tracehealth::server {

struct ReportPartition {
  std::string name;
  int64_t from_ns = 0;  // inclusive
  int64_t to_ns = 0;    // exclusive
};

// The range partitions of reports (not the default one), by start.
absl::StatusOr<std::vector<ReportPartition>> ListPartitions(PgConnection& conn);

// Creates the partitions of `span` covering [from_ns, to_ns) that do not
// exist yet (another replica creating one at the same time is fine).
// Returns the end of the covered range. Errors: the DDL's, except a
// partition that exists or whose range holds rows of reports_default (those
// rows stay where they are).
absl::StatusOr<int64_t> EnsurePartitions(PgConnection& conn, int64_t from_ns,
                                         int64_t to_ns, absl::Duration span);

// Retention at a span boundary: each partition ending at or before
// `cutoff_ns` is detached, the rows it must keep (each host's newest report,
// and the full reports of the heartbeats left in the heartbeats table) are
// copied back into reports (into reports_default), and it is dropped, one
// transaction a partition. Returns the rows dropped.
absl::StatusOr<int64_t> DropPartitionsBefore(PgConnection& conn,
                                             int64_t cutoff_ns);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_PARTITIONS_H_
