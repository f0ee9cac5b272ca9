#include "server/storage/sqlite/ledger.h"

#include <sqlite3.h>

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "server/storage/seq_runs.h"
#include "server/storage/sqlite/connection.h"
#include "server/storage/sqlite/heartbeats.h"

namespace tracehealth::server {

absl::StatusOr<std::unique_ptr<SqliteLedger>> SqliteLedger::Open(
    sqlite3* write_db, int64_t checkpoint_rows) {
  std::unique_ptr<SqliteLedger> l(new SqliteLedger(write_db, checkpoint_rows));
  TH_ASSIGN_OR_RETURN(
      l->put_host_,
      SqliteStatement::Prepare(
          write_db,
          "INSERT OR REPLACE INTO hosts (host_id, first_seen_ns, last_seen_ns, "
          "reports, latest_seq, latest_rowid, seq_runs, spilled_through) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
  TH_ASSIGN_OR_RETURN(l->set_through_,
                      SqliteStatement::Prepare(
                          write_db, "UPDATE ledger SET through_rowid = ?1"));
  // The run that could hold ?2: the last one starting at or below it.
  TH_ASSIGN_OR_RETURN(
      l->find_spilled_,
      SqliteStatement::Prepare(
          write_db,
          "SELECT last FROM seq_spill WHERE host_id = ?1 AND first <= ?2 "
          "ORDER BY first DESC LIMIT 1"));
  TH_ASSIGN_OR_RETURN(
      l->put_spilled_,
      SqliteStatement::Prepare(
          write_db,
          "INSERT INTO seq_spill (host_id, first, last) VALUES (?1, ?2, ?3)"));
  TH_RETURN_IF_ERROR(l->Load());
  return l;
}

absl::Status SqliteLedger::Load() {
  ledger_.Clear();
  valid_ = false;
  TH_ASSIGN_OR_RETURN(
      auto hosts,
      SqliteStatement::Prepare(
          db_,
          "SELECT host_id, first_seen_ns, last_seen_ns, reports, latest_seq, "
          "latest_rowid, seq_runs, spilled_through FROM hosts"));
  int rc;
  while ((rc = hosts->Step()) == SQLITE_ROW) {
    LedgerEntry e;
    e.first_seen_ns = hosts->Int(1);
    e.last_seen_ns = hosts->Int(2);
    e.reports = static_cast<uint64_t>(hosts->Int(3));
    e.latest_seq = static_cast<uint64_t>(hosts->Int(4));
    e.latest_rowid = hosts->Int(5);
    std::string host = hosts->Text(0);
    absl::StatusOr<SeqRuns> seqs =
        SeqRuns::Decode(hosts->Text(6), static_cast<uint64_t>(hosts->Int(7)));
    if (!seqs.ok()) {
      return Annotate(seqs.status(), absl::StrCat("hosts row of ", host));
    }
    e.seqs = *std::move(seqs);
    ledger_.Restore(std::move(host), std::move(e));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "load hosts");
  absl::flat_hash_map<std::string, uint64_t> checkpointed;
  checkpointed.reserve(ledger_.size());
  ledger_.ForEach(
      [&checkpointed](const std::string& host, const LedgerEntry& e) {
        checkpointed[host] = e.latest_seq;
      });
  TH_ASSIGN_OR_RETURN(
      auto through,
      SqliteStatement::Prepare(db_, "SELECT through_rowid FROM ledger"));
  if (through->Step() != SQLITE_ROW) return SqliteError(db_, "read ledger");
  through_ = through->Int(0);
  // Rows stored after the checkpoint, in the order they were stored.
  TH_ASSIGN_OR_RETURN(
      auto replay,
      SqliteStatement::Prepare(db_,
                               "SELECT id, host_id, seq, received_at_ns FROM "
                               "reports WHERE id > ?1 ORDER BY id"));
  replay->BindInt(1, through_);
  last_rowid_ = through_;
  while ((rc = replay->Step()) == SQLITE_ROW) {
    last_rowid_ = replay->Int(0);
    // What this spills, the row's own transaction wrote (see the header).
    spilled_.clear();
    ledger_.Record(replay->Text(1), static_cast<uint64_t>(replay->Int(2)),
                   replay->Int(3), last_rowid_, &spilled_);
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "replay reports");
  replayed_rows_ = last_rowid_ - through_;
  TH_RETURN_IF_ERROR(ReplayHeartbeats(checkpointed));
  valid_ = true;
  return absl::OkStatus();
}

absl::Status SqliteLedger::ReplayHeartbeats(
    const absl::flat_hash_map<std::string, uint64_t>& checkpointed) {
  // Every heartbeat's seq was above its host's newest stored seq when it was
  // stored (sqlite_storage.cc), so those not in the checkpoint lie above
  // the host's checkpointed newest seq. Hosts new since the checkpoint came
  // with a full report, replayed above.
  std::vector<std::pair<std::string, uint64_t>> hosts;
  hosts.reserve(ledger_.size());
  ledger_.ForEach([&](const std::string& host, const LedgerEntry&) {
    auto it = checkpointed.find(host);
    hosts.emplace_back(host, it == checkpointed.end() ? 0 : it->second);
  });
  for (const auto& [host, after] : hosts) {
    TH_ASSIGN_OR_RETURN(std::vector<StoredChunk> chunks,
                        ChunksAfter(db_, host, after));
    for (const StoredChunk& c : chunks) {
      for (const Beat& b : c.beats) {
        if (b.seq <= after) continue;
        if (ledger_.Find(host, b.seq) == SeqRuns::Answer::kStored) continue;
        spilled_.clear();
        ledger_.Record(host, b.seq, b.received_at_ns, c.base_id, &spilled_);
        ++replayed_beats_;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SqliteLedger::Stored(absl::string_view host,
                                          uint64_t seq) {
  switch (ledger_.Find(host, seq)) {
    case SeqRuns::Answer::kStored:
      return true;
    case SeqRuns::Answer::kAbsent:
      return false;
    case SeqRuns::Answer::kAskStore:
      break;
  }
  ++spill_lookups_;
  SqliteStatement& find = *find_spilled_;
  find.Reset();
  find.BindText(1, host);
  find.BindInt(2, static_cast<int64_t>(seq));
  const int rc = find.Step();
  const bool stored =
      rc == SQLITE_ROW && static_cast<uint64_t>(find.Int(0)) >= seq;
  find.Reset();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    return SqliteError(db_, "look up spilled seqs");
  }
  return stored;
}

absl::Status SqliteLedger::Record(absl::string_view host, uint64_t seq,
                                  int64_t received_at_ns, int64_t rowid) {
  last_rowid_ = rowid;
  spilled_.clear();
  ledger_.Record(host, seq, received_at_ns, rowid, &spilled_);
  return WriteSpilled(host);
}

absl::Status SqliteLedger::RecordHeartbeat(absl::string_view host, uint64_t seq,
                                           int64_t received_at_ns,
                                           int64_t base_rowid) {
  spilled_.clear();
  ledger_.Record(host, seq, received_at_ns, base_rowid, &spilled_);
  return WriteSpilled(host);
}

absl::Status SqliteLedger::WriteSpilled(absl::string_view host) {
  SqliteStatement& put = *put_spilled_;
  for (const auto& [first, last] : spilled_) {
    put.Reset();
    put.BindText(1, host);
    put.BindInt(2, static_cast<int64_t>(first));
    put.BindInt(3, static_cast<int64_t>(last));
    if (put.Step() != SQLITE_DONE) {
      put.Reset();
      return SqliteError(db_, "write spilled seqs");
    }
    ++runs_spilled_;
  }
  put.Reset();
  return absl::OkStatus();
}

absl::Status SqliteLedger::Ready() {
  return valid_ ? absl::OkStatus() : Load();
}

void SqliteLedger::Saved() {
  ledger_.ClearChanged();
  through_ = last_rowid_;
}

absl::Status SqliteLedger::WriteRows() {
  SqliteStatement& put = *put_host_;
  absl::Status st;
  ledger_.ForEachChanged([&](const std::string& host, const LedgerEntry& e) {
    if (!st.ok()) return;
    const std::string seqs = e.seqs.Encode();
    put.Reset();
    put.BindText(1, host);
    put.BindInt(2, e.first_seen_ns);
    put.BindInt(3, e.last_seen_ns);
    put.BindInt(4, static_cast<int64_t>(e.reports));
    put.BindInt(5, static_cast<int64_t>(e.latest_seq));
    put.BindInt(6, e.latest_rowid);
    put.BindText(7, seqs);
    put.BindInt(8, static_cast<int64_t>(e.seqs.spilled_through()));
    if (put.Step() != SQLITE_DONE) st = SqliteError(db_, "write hosts row");
  });
  put.Reset();
  TH_RETURN_IF_ERROR(st);
  set_through_->Reset();
  set_through_->BindInt(1, last_rowid_);
  if (set_through_->Step() != SQLITE_DONE) {
    set_through_->Reset();
    return SqliteError(db_, "write ledger");
  }
  set_through_->Reset();
  return absl::OkStatus();
}

absl::Status SqliteLedger::Checkpoint() {
  if (ledger_.changed() == 0) return absl::OkStatus();
  TH_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
  absl::Status st = WriteRows();
  if (st.ok() &&
      sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    st = SqliteError(db_, "commit ledger");
  }
  if (!st.ok()) {
    (void)Exec(db_, "ROLLBACK");
    return st;
  }
  Saved();
  return absl::OkStatus();
}

}  // namespace tracehealth::server
