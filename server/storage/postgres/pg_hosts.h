// The PostgreSQL store's hosts table: what one batch of reports changes of
// each host's bookkeeping, written as one UPDATE for the known hosts and one
// INSERT for the new ones.
//
// Thread safety: the function uses only the connection passed in, which the
// caller serializes (inside its transaction).
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_HOSTS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_HOSTS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "server/storage/postgres/pg_connection.h"

namespace tracehealth::server {

// What one batch changes of one host.
struct HostUpdate {
  int64_t stored = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  int64_t max_seq = 0;
  int64_t max_seq_received_ns = 0;
  // When max_seq is a heartbeat: its full report's seq and receive time
  // (hosts.latest_base_seq/_received_ns); -1 when it is stored whole.
  int64_t max_seq_base_seq = -1;
  int64_t max_seq_base_received_ns = -1;
};

// Known hosts (in `latest`, their locked rows' newest seq) are updated, new
// ones inserted; each as one statement over arrays. `writer_id` is the
// replica storing the batch: it becomes a host's writer only with the
// host's newest report.
absl::Status PgUpsertHosts(PgConnection& conn,
                           const std::map<std::string, HostUpdate>& updates,
                           const std::map<std::string, int64_t>& latest,
                           int64_t writer_id);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_HOSTS_H_
