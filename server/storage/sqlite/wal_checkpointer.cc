#include "server/storage/sqlite/wal_checkpointer.h"

#include <pthread.h>
#include <sqlite3.h>

#include "server/storage/sqlite/connection.h"

namespace tracehealth::server {

absl::StatusOr<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(
    const std::string& path, sqlite3* write_db, const Options& options) {
  absl::StatusOr<sqlite3*> db = OpenConnection(path);
  if (!db.ok()) return db.status();
  // A connection opens the write-ahead log on its first read; until then
  // sqlite3_wal_checkpoint_v2 on it returns OK having copied nothing.
  if (absl::Status st = Exec(*db, "SELECT count(*) FROM sqlite_master");
      !st.ok()) {
    sqlite3_close(*db);
    return st;
  }
  std::unique_ptr<WalCheckpointer> c(
      new WalCheckpointer(write_db, *db, options));
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(write_db, "PRAGMA page_size", -1, &st, nullptr) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    c->page_bytes_ = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_wal_hook(write_db, &WalCheckpointer::OnWalCommit, c.get());
  WalCheckpointer* self = c.get();
  c->thread_ = std::thread([self] {
    pthread_setname_np(pthread_self(), "wal-checkpoint");
    while (
        !self->stop_.WaitForNotificationWithTimeout(self->options_.interval)) {
      // PASSIVE: copies what it can without blocking the writer or readers.
      sqlite3_wal_checkpoint_v2(self->db_, nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                nullptr, nullptr);
    }
  });
  return c;
}

WalCheckpointer::WalCheckpointer(sqlite3* write_db, sqlite3* db,
                                 const Options& options)
    : write_db_(write_db), db_(db), options_(options) {}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_hook(write_db_, nullptr, nullptr);
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
  // Leave a small log behind: copy everything and truncate the WAL.
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr,
                            nullptr);
  sqlite3_close(db_);
}

int WalCheckpointer::OnWalCommit(void* self, sqlite3*, const char*,
                                 int frames) {
  // Inside the COMMIT, under the caller's serialization of the connection.
  static_cast<WalCheckpointer*>(self)->wal_frames_ = frames;
  return SQLITE_OK;
}

void WalCheckpointer::AfterCommit() {
  const int64_t wal_bytes = wal_frames_ * (page_bytes_ + 24);
  if (options_.limit_bytes > 0 && wal_bytes > options_.limit_bytes) {
    // The background checkpointer fell behind (or readers pinned the log):
    // bound the disk used by checkpointing here, resetting the log.
    sqlite3_wal_checkpoint_v2(write_db_, nullptr, SQLITE_CHECKPOINT_RESTART,
                              nullptr, nullptr);
    wal_frames_ = 0;
  } else if (options_.reset_bytes > 0 && wal_bytes > options_.reset_bytes) {
    // Copy the newest frames so that the next transaction starts the log
    // over.
    sqlite3_wal_checkpoint_v2(write_db_, nullptr, SQLITE_CHECKPOINT_PASSIVE,
                              nullptr, nullptr);
    wal_frames_ = 0;
  }
}

}  // namespace tracehealth::server
