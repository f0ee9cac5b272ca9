#include "server/data_dir_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tracehealth::server {
namespace {

// The pid the holder wrote, or "unknown" (it may be writing it right now).
std::string HolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  std::string pid =
      n > 0 ? std::string(absl::StripAsciiWhitespace(absl::string_view(buf, n)))
            : "";
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DataDirLock>> DataDirLock::Acquire(
    const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(
          absl::StrCat("data directory ", dir, " does not exist"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("data directory ", dir, ": ", std::strerror(err)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("data directory ", dir, " is not a directory"));
  }
  std::string path = absl::StrCat(dir, "/", kFileName);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = HolderPid(fd);
    close(fd);
    if (err == EWOULDBLOCK) {
      return absl::UnavailableError(
          absl::StrCat("data directory ", dir,
                       " is in use by another tracehealth-server (pid ", holder,
                       ", holding ", path, ")"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot lock ", path, ": ", std::strerror(err)));
  }
  // Ours now: the pid for the next one who tries.
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) !=
                                   static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    close(fd);
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(err)));
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(std::move(path), fd));
}

DataDirLock::~DataDirLock() { close(fd_); }

}  // namespace tracehealth::server
