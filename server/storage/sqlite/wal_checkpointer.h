// WalCheckpointer: keeps the SQLite store's write-ahead log small without
// making commits wait for checkpoints.
//
// A background thread ("wal-checkpoint", its own connection) runs PASSIVE
// checkpoints every `interval`, copying committed pages from the log into
// the database file while the writer goes on. The log only starts over when
// a transaction begins with every frame copied, which a writer committing
// back to back rarely sees; so after a commit that leaves more than
// `reset_bytes` in the log, AfterCommit runs a PASSIVE checkpoint on the
// write connection itself (the thread has copied all but the newest frames,
// so this copies little) and the next transaction reuses the log from its
// start. Past `limit_bytes` (readers pinning old frames) AfterCommit waits
// for a RESTART checkpoint, which bounds the disk the log uses.
//
// Thread safety: Start hooks into every commit on the write connection
// (sqlite3_wal_hook); commits on it and AfterCommit must be serialized by
// the caller (the store's write lock). The thread touches only its own
// connection.
#ifndef TRACEHEALTH_SERVER_STORAGE_SQLITE_WAL_CHECKPOINTER_H_
#define TRACEHEALTH_SERVER_STORAGE_SQLITE_WAL_CHECKPOINTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

struct sqlite3;

namespace tracehealth::server {

class WalCheckpointer {
 public:
  struct Options {
    absl::Duration interval = absl::Milliseconds(200);
    int64_t reset_bytes = 64LL << 20;   // 0: never from AfterCommit
    int64_t limit_bytes = 512LL << 20;  // 0: no bound
  };

  // Opens a connection to the database at `path`, starts the thread and
  // hooks into `write_db`'s commits (`write_db` must outlive this and have
  // no transaction open). Errors: the connection cannot be opened or read;
  // the caller should then let SQLite checkpoint inside commits again.
  static absl::StatusOr<std::unique_ptr<WalCheckpointer>> Start(
      const std::string& path, sqlite3* write_db, const Options& options);

  // Unhooks from the write connection (not in use by then), stops the
  // thread, then copies the whole log into the database and truncates it.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Call right after each commit on the write connection (see above).
  void AfterCommit();

 private:
  WalCheckpointer(sqlite3* write_db, sqlite3* db, const Options& options);
  // sqlite3_wal_hook: records the frames in the log after each commit.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int frames);

  sqlite3* const write_db_;
  sqlite3* const db_;  // the thread's connection
  const Options options_;
  int64_t page_bytes_ = 4096;
  // Frames in the log after the last commit on write_db_ (OnWalCommit).
  int64_t wal_frames_ = 0;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_SQLITE_WAL_CHECKPOINTER_H_
