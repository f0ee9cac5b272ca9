// SqliteLedger: the host ledger (server/storage/host_ledger.h) of a SQLite
// store, persisted in its hosts and ledger tables.
//
// The checkpoint is one hosts row per host (first/last seen, report count,
// newest seq and its row, the stored seqs as runs, the highest seq spilled)
// plus the ledger row (the last report row the checkpoint covers). Open
// loads the checkpoint and replays the report rows stored after it, and the
// heartbeats above each host's checkpointed newest seq (heartbeats only
// ever extend a host's seqs), so the ledger is exact after a crash.
//
// Seq runs a host has beyond what memory keeps (SeqRuns) go to the seq_spill
// table, written in the transaction of the row that spilled them, so a
// replay after a crash finds them there as the rows' original transactions
// left them: the replay spills the same runs again and writes nothing. The
// store checkpoints inside a commit once `checkpoint_rows` rows were stored
// since the last checkpoint (WriteRows before COMMIT, Saved after it), before
// retention deletes rows, and at close.
//
// After a failed transaction the ledger may hold rows that were rolled
// back: the store calls Invalidate, and Ready reads it again from the file.
//
// Thread safety: none. The store calls it with its write lock held; it uses
// only the write connection.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_LEDGER_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_LEDGER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/storage/host_ledger.h"
#include "server/storage/seq_runs.h"
#include "server/storage/sqlite/statement.h"

namespace tracehealth::server {

class SqliteLedger {
 public:
  // Prepares the checkpoint statements on `write_db` (a file at the latest
  // schema version; not owned) and loads the ledger. Errors: SQLite's, or
  // DataLoss for a hosts row whose seq runs do not decode.
  static absl::StatusOr<std::unique_ptr<SqliteLedger>> Open(
      sqlite3* write_db, int64_t checkpoint_rows);

  // OK when the ledger matches the file; after Invalidate, loads it again.
  absl::Status Ready();
  // The transaction that recorded rows was rolled back.
  void Invalidate() { valid_ = false; }
  bool valid() const { return valid_; }

  const HostLedger& hosts() const { return ledger_; }
  // Whether (host, seq) is stored: from memory, or for a seq in a host's
  // spilled runs, from seq_spill (inside the caller's transaction, so rows
  // of the batch so far count).
  absl::StatusOr<bool> Stored(absl::string_view host, uint64_t seq);
  // A row just inserted in the current transaction; `rowid` is its id.
  // Writes the runs it spills, in that transaction.
  absl::Status Record(absl::string_view host, uint64_t seq,
                      int64_t received_at_ns, int64_t rowid);

  // A heartbeat just stored in the current transaction, folded into the
  // full report of row `base_rowid` (sqlite/heartbeats.h): the host's newest
  // row stays that report's. Writes the runs it spills, in that transaction.
  absl::Status RecordHeartbeat(absl::string_view host, uint64_t seq,
                               int64_t received_at_ns, int64_t base_rowid);

  // Lookups answered by seq_spill, and runs written to it, since Open.
  int64_t spill_lookups() const { return spill_lookups_; }
  int64_t runs_spilled() const { return runs_spilled_; }

  // Whether the current transaction should carry a checkpoint (WriteRows).
  bool CheckpointDue() const {
    return last_rowid_ - through_ >= checkpoint_rows_;
  }
  // Writes the changed hosts and the rows covered, inside the caller's
  // transaction.
  absl::Status WriteRows();
  // After the transaction that carried WriteRows committed.
  void Saved();
  // When anything changed since the last checkpoint: WriteRows in a
  // transaction of its own, then Saved.
  absl::Status Checkpoint();

  // Rows the last load replayed (stored after its checkpoint).
  int64_t rows_replayed() const { return replayed_rows_; }
  // Heartbeats the loads replayed.
  int64_t beats_replayed() const { return replayed_beats_; }

 private:
  SqliteLedger(sqlite3* write_db, int64_t checkpoint_rows)
      : db_(write_db), checkpoint_rows_(checkpoint_rows) {}
  // Reads the checkpoint and replays the rows and heartbeats stored after
  // it.
  absl::Status Load();
  // Load's second part: the heartbeats above each host's checkpointed seq.
  absl::Status ReplayHeartbeats(
      const absl::flat_hash_map<std::string, uint64_t>& checkpointed);
  absl::Status WriteSpilled(absl::string_view host);

  sqlite3* const db_;
  const int64_t checkpoint_rows_;
  std::unique_ptr<SqliteStatement> put_host_;
  std::unique_ptr<SqliteStatement> set_through_;
  std::unique_ptr<SqliteStatement> find_spilled_;
  std::unique_ptr<SqliteStatement> put_spilled_;
  std::vector<SeqRuns::Run> spilled_;  // Record's scratch
  int64_t spill_lookups_ = 0;
  int64_t runs_spilled_ = 0;
  HostLedger ledger_;
  bool valid_ = false;      // false until loaded and after Invalidate
  int64_t through_ = 0;     // rows the checkpoint covers
  int64_t last_rowid_ = 0;  // newest stored row
  int64_t replayed_rows_ = 0;
  int64_t replayed_beats_ = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_LEDGER_H_
