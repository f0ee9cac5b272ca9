// DataDirLock: one server per data directory.
//
// Acquire takes an exclusive flock(2) on DIR/tracehealth.lock (created if
// needed) and writes the holder's pid into it; the lock is held until the
// DataDirLock is destroyed or the process ends (the kernel drops it even on
// kill -9), so a second server on the same directory cannot start and split
// or double-store what agents send.
//
// Thread safety: a plain value; construct and destroy on one thread.
#ifndef TRACEHEALTH_SERVER_DATA_DIR_LOCK_H_
#define TRACEHEALTH_SERVER_DATA_DIR_LOCK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace tracehealth::server {

class DataDirLock {
 public:
  static constexpr char kFileName[] = "tracehealth.lock";

  // Errors: NotFound when `dir` does not exist, FailedPrecondition when it
  // is not a directory, PermissionDenied when the lock file cannot be
  // created or opened, Unavailable (naming the holder's pid as read from
  // the file) when another process holds the lock.
  static absl::StatusOr<std::unique_ptr<DataDirLock>> Acquire(
      const std::string& dir);

  ~DataDirLock();  // releases the lock (the file stays)
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  DataDirLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  const std::string path_;
  const int fd_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_DATA_DIR_LOCK_H_
