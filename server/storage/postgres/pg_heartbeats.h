// Heartbeats in the PostgreSQL store (schema 5): the heartbeats table, one
// row per chunk (server/storage/heartbeat_chunk.h) of a host's heartbeats on
// one full report, the reports row (host_id, base_seq), keyed by (host_id,
// first_seq) and indexed by (host_id, base_seq) (retention keeps a full
// report while a chunk on it lives). A host's chunks cover disjoint seq
// ranges: a heartbeat is stored only above its host's every stored seq, and
// appended to an open chunk only while the host's newest seq is the
// chunk's (see PostgresStorage::WriteInTransaction).
//
// Reads: a heartbeat's report is its full report with the beat put in
// (heartbeat_report.h); history merges full reports and heartbeats as the
// SQLite store does (server/storage/sqlite/history.h), a heartbeat's row
// carrying its own seq, times, threads and prediction columns and its full
// report's risk and blob.
//
// Thread safety: a PgBeatBatch is used by one thread; the functions use
// only the connection passed in, which the caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_HEARTBEATS_H_
#define TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_HEARTBEATS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/storage/heartbeat_policy.h"
#include "server/storage/postgres/pg_connection.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// The heartbeats of one WriteBatch transaction: Add encodes each into its
// host's open chunk (HeartbeatPolicy::Host::chunk_id is the chunk's
// first_seq) or starts one; Write sends them, one INSERT for the new chunks
// and one UPDATE for the chunks appended to.
class PgBeatBatch {
 public:
  // `host` is the policy's state of row.host_id, its base_seq the full
  // report `row` folds into.
  void Add(HeartbeatPolicy::Host& host, const ReportRow& row);
  bool empty() const { return chunks_.empty(); }
  // Inside the caller's transaction. Internal when a chunk to append to is
  // gone (the transaction must then roll back).
  absl::Status Write(PgConnection& conn);

 private:
  struct Pending {
    bool fresh = false;  // a new chunk: inserted, not appended to
    int64_t base_seq = 0;
    int64_t last_seq = 0;
    int64_t first_observed_ns = 0;
    int64_t last_observed_ns = 0;
    int64_t last_received_ns = 0;
    int64_t beats = 0;
    std::string bytes;  // the chunk (fresh) or what to append
  };
  // (host_id, first_seq) -> what this batch adds.
  std::map<std::pair<std::string, int64_t>, Pending> chunks_;
};

// Of the (hosts[i], seqs[i]), those stored as heartbeats.
absl::StatusOr<std::set<std::pair<std::string, int64_t>>> PgStoredBeats(
    PgConnection& conn, const std::vector<std::string>& hosts,
    const std::vector<int64_t>& seqs);

// The report of heartbeat (host_id, seq): NotFound when there is none,
// DataLoss when its full report is gone or does not parse.
absl::StatusOr<std::string> PgHeartbeatReport(PgConnection& conn,
                                              const std::string& host_id,
                                              uint64_t seq);

// ReportStore::ReadHostHistory over full reports and heartbeats;
// `max_rows` >= 1.
absl::StatusOr<HistoryRows> PgReadHistory(PgConnection& conn,
                                          const std::string& host_id,
                                          int64_t from_ns, int64_t to_ns,
                                          size_t max_rows);

// Deletes the chunks whose last beat was received before
// `received_before_ns`, except those holding their host's newest seq (by
// the hosts table). Returns the heartbeats deleted.
absl::StatusOr<int64_t> PgDeleteOldChunks(PgConnection& conn,
                                          int64_t received_before_ns);

// Heartbeats stored for `host_id` (all hosts when empty).
absl::StatusOr<int64_t> PgCountBeats(PgConnection& conn,
                                     const std::string& host_id);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_POSTGRES_PG_HEARTBEATS_H_
