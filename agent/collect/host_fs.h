// HostFs: read-only access to a host's files, rooted at a directory.
//
// Every collector reads through one HostFs, so the same code runs on the live
// host (root "/") and on fixture trees (root "tests/fixtures/hosts/NAME").
// Paths given to HostFs are absolute host paths ("/proc/loadavg"); they are
// resolved under the root. Paths with ".." components, relative paths and
// paths with NUL bytes are refused (InvalidArgument), so no lookup leaves the
// root lexically. Symlinks are followed as the OS follows them: fixture trees
// (e.g. in Bazel runfiles) are often symlink farms, and on the live root "/"
// there is nothing outside to escape to. HostFs never writes.
//
// Errors: errno values map to Status via ErrnoToStatus (ENOENT -> NotFound,
// EACCES -> PermissionDenied, ...), the message naming the host path.
// A file larger than the caller's byte limit is ResourceExhausted.
//
// Thread safety: all methods are const and may be called concurrently; the
// open counter is atomic.
#ifndef TRACEHEALTH_AGENT_COLLECT_HOST_FS_H_
#define TRACEHEALTH_AGENT_COLLECT_HOST_FS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

class HostFs {
 public:
  // `root` is a directory ("/" for the live host). A trailing '/' is ignored.
  explicit HostFs(std::string root);

  HostFs(const HostFs&) = delete;
  HostFs& operator=(const HostFs&) = delete;

  // The whole content of `path`. ResourceExhausted when the file has more
  // than `max_bytes` bytes.
  absl::StatusOr<std::string> ReadFile(absl::string_view path,
                                       size_t max_bytes) const;

  // Streams `path` line by line (without the '\n'; a last line without '\n'
  // is passed too) to `on_line`, holding at most one 64 KiB buffer plus one
  // line in memory. Stops with ResourceExhausted after `max_bytes` bytes.
  // Returns the number of lines passed.
  absl::StatusOr<uint64_t> ReadLines(
      absl::string_view path, uint64_t max_bytes,
      const std::function<void(absl::string_view)>& on_line) const;

  // Names in directory `path` (without "." and ".."), unsorted, at most
  // `max_entries` (ResourceExhausted beyond).
  absl::StatusOr<std::vector<std::string>> ListDir(
      absl::string_view path, size_t max_entries = 1 << 20) const;

  // The target of symlink `path` (readlink(2)), e.g. "anon_inode:bpf_link"
  // for a /proc/PID/fd entry. Counts as one open.
  absl::StatusOr<std::string> ReadLink(absl::string_view path) const;

  // Whether `path` exists (any file type). False for refused paths.
  bool Exists(absl::string_view path) const;

  // The root directory given at construction.
  const std::string& root() const { return root_; }

  // Number of files and directories opened so far (ReadFile, ReadLines,
  // ListDir and ReadLink each count one, successful or not).
  uint64_t opens() const { return opens_.load(std::memory_order_relaxed); }

 private:
  // Root-joined path, or InvalidArgument for a refused path.
  absl::StatusOr<std::string> Resolve(absl::string_view path) const;

  std::string root_;
  mutable std::atomic<uint64_t> opens_{0};
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_HOST_FS_H_
