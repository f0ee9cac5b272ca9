// Heartbeat chunks in a SQLite store: the heartbeats table (schema 9), one
// row per chunk (server/storage/heartbeat_chunk.h) of a host's heartbeats on
// one full report (`base_id`, a reports row), with the seqs, observation
// times and last receive time it covers. Indexed by (host_id, first_seq)
// and by base_id (retention keeps a chunk's full report while the chunk
// lives).
//
// Thread safety: the writer is used under the store's write lock on the
// write connection; the functions use only the connection passed in, which
// the caller serializes.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_HEARTBEATS_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_HEARTBEATS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "server/storage/heartbeat_chunk.h"
#include "server/storage/heartbeat_policy.h"
#include "server/storage/report_store.h"
#include "server/storage/sqlite/statement.h"

struct sqlite3;

namespace tracehealth::server {

class SqliteHeartbeatWriter {
 public:
  static absl::StatusOr<std::unique_ptr<SqliteHeartbeatWriter>> Prepare(
      sqlite3* write_db);
  // Inside the caller's transaction: appends `row`'s beat to `host`'s open
  // chunk, or starts a chunk (none open, or it is full).
  absl::Status Write(HeartbeatPolicy::Host& host, const ReportRow& row);

 private:
  explicit SqliteHeartbeatWriter(sqlite3* db) : db_(db) {}
  sqlite3* const db_;
  std::unique_ptr<SqliteStatement> insert_;
  std::unique_ptr<SqliteStatement> append_;
};

// A chunk as read back.
struct StoredChunk {
  int64_t base_id = 0;
  std::vector<Beat> beats;
};

// The chunks of `host_id` with beats observed in [from_ns, to_ns) (and
// perhaps others of the same chunks).
absl::StatusOr<std::vector<StoredChunk>> ReadChunks(sqlite3* db,
                                                    const std::string& host_id,
                                                    int64_t from_ns,
                                                    int64_t to_ns);

// The chunks of `host_id` holding seqs above `after`, in seq order.
absl::StatusOr<std::vector<StoredChunk>> ChunksAfter(sqlite3* db,
                                                     const std::string& host_id,
                                                     uint64_t after);

// The heartbeat (host_id, seq) and its full report's id; nullopt when none.
absl::StatusOr<std::optional<std::pair<int64_t, Beat>>> FindBeat(
    sqlite3* db, const std::string& host_id, uint64_t seq);

// One transaction: deletes the chunks whose last beat was received before
// `received_before_ns`, except those holding their host's newest seq (by
// the hosts table). Returns the heartbeats deleted.
absl::StatusOr<int64_t> DeleteOldChunks(sqlite3* db,
                                        int64_t received_before_ns);

// Heartbeats stored for `host_id` (all hosts when empty).
absl::StatusOr<int64_t> CountBeats(sqlite3* db, const std::string& host_id);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_HEARTBEATS_H_
