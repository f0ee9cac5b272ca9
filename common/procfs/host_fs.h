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
// Cost accounting: every system call made for a path is charged to its input,
// the host path with each all-digit component written "*" ("/proc/*/fd/*"),
// so that a scan of every process is one input. TakeCosts() hands out what
// was charged since the last call.
//
// Buffers: a read starts with a buffer as large as the same input's last
// read (at least 4 KiB for ReadFile, 64 KiB for ReadLines, at most 4 MiB)
// and doubles it while reads fill it, so a large file takes few read()
// calls. How many bytes one read() returns is the file's business, though:
// kernel seq_files that iterate records (vmallocinfo before 6.9,
// available_filter_functions, cpuinfo) return at most one page per read()
// whatever the buffer, and the accounting shows that.
//
// Errors: errno values map to Status via ErrnoToStatus (ENOENT -> NotFound,
// EACCES -> PermissionDenied, ...), the message naming the host path.
// A file larger than the caller's byte limit is ResourceExhausted.
//
// Thread safety: all methods are const and may be called concurrently; the
// accounting is guarded by a mutex.
#ifndef TRACEHEALTH_COMMON_PROCFS_HOST_FS_H_
#define TRACEHEALTH_COMMON_PROCFS_HOST_FS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tracehealth {

// What reading an input cost.
struct IoCost {
  // open() and readlink() calls: path lookups that reach a file.
  uint64_t opens = 0;
  // read() and getdents64() calls, and the bytes they returned.
  uint64_t read_calls = 0;
  uint64_t bytes = 0;
  // Every system call: open, read, getdents64, readlink, stat, close.
  uint64_t syscalls = 0;

  IoCost& operator+=(const IoCost& o) {
    opens += o.opens;
    read_calls += o.read_calls;
    bytes += o.bytes;
    syscalls += o.syscalls;
    return *this;
  }
};

// Costs by input ("/proc/*/fdinfo/*"), sorted by input.
using InputCosts = std::vector<std::pair<std::string, IoCost>>;

// The input `path` is charged to: each all-digit component written "*".
std::string CostInput(absl::string_view path);

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
  // is passed too) to `on_line`, holding one buffer (see Buffers above) plus
  // one line in memory. Stops with ResourceExhausted after `max_bytes`
  // bytes. Returns the number of lines passed.
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

  // Files and directories opened so far (ReadFile, ReadLines, ListDir and
  // ReadLink each count one, successful or not).
  uint64_t opens() const;
  // Everything charged since construction.
  IoCost total() const;
  // What was charged since the last call, by input.
  InputCosts TakeCosts() const;

 private:
  struct Input {
    IoCost pending;  // since the last TakeCosts()
    // Bytes of the last complete read, for the next read's buffer.
    uint64_t last_bytes = 0;
  };

  // Root-joined path, or InvalidArgument for a refused path.
  absl::StatusOr<std::string> Resolve(absl::string_view path) const;
  // Charges `cost` to `input` (CostInput of a path); with `complete_bytes`
  // set, records them as the size of a whole read.
  void Charge(const std::string& input, const IoCost& cost,
              const uint64_t* complete_bytes = nullptr) const;
  // Bytes of the last complete read of `input` (0: none yet).
  uint64_t LastBytes(const std::string& input) const;

  std::string root_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, Input> inputs_ ABSL_GUARDED_BY(mu_);
  mutable IoCost total_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_PROCFS_HOST_FS_H_
