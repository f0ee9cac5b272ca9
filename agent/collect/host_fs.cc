#include "agent/collect/host_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kChunk = 64 * 1024;

// Closes a file descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

// read() that retries on EINTR.
ssize_t ReadSome(int fd, char* buf, size_t n) {
  ssize_t r;
  do {
    r = read(fd, buf, n);
  } while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace

HostFs::HostFs(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  if (root_.empty()) root_ = "/";
}

absl::StatusOr<std::string> HostFs::Resolve(absl::string_view path) const {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not an absolute host path"));
  }
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("path contains a NUL byte");
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": '..' would leave the host root"));
    }
  }
  if (root_ == "/") return std::string(path);
  return absl::StrCat(root_, path);
}

absl::StatusOr<std::string> HostFs::ReadFile(absl::string_view path,
                                             size_t max_bytes) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  opens_.fetch_add(1, std::memory_order_relaxed);
  int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ::tracehealth::ErrnoToStatus(errno, path);
  FdCloser closer(fd);
  std::string content;
  char buf[kChunk];
  while (true) {
    ssize_t n = ReadSome(fd, buf, sizeof(buf));
    if (n < 0) return ::tracehealth::ErrnoToStatus(errno, path);
    if (n == 0) break;
    if (content.size() + static_cast<size_t>(n) > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
    }
    content.append(buf, static_cast<size_t>(n));
  }
  return content;
}

absl::StatusOr<uint64_t> HostFs::ReadLines(
    absl::string_view path, uint64_t max_bytes,
    const std::function<void(absl::string_view)>& on_line) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  opens_.fetch_add(1, std::memory_order_relaxed);
  int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ::tracehealth::ErrnoToStatus(errno, path);
  FdCloser closer(fd);
  std::string pending;  // a line split across chunks
  char buf[kChunk];
  uint64_t total = 0;
  uint64_t lines = 0;
  while (true) {
    ssize_t n = ReadSome(fd, buf, sizeof(buf));
    if (n < 0) return ::tracehealth::ErrnoToStatus(errno, path);
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
    }
    absl::string_view chunk(buf, static_cast<size_t>(n));
    size_t start = 0;
    while (true) {
      size_t nl = chunk.find('\n', start);
      if (nl == absl::string_view::npos) {
        pending.append(chunk.data() + start, chunk.size() - start);
        break;
      }
      if (pending.empty()) {
        on_line(chunk.substr(start, nl - start));
      } else {
        pending.append(chunk.data() + start, nl - start);
        on_line(pending);
        pending.clear();
      }
      ++lines;
      start = nl + 1;
    }
  }
  if (!pending.empty()) {
    on_line(pending);
    ++lines;
  }
  return lines;
}

absl::StatusOr<std::vector<std::string>> HostFs::ListDir(
    absl::string_view path, size_t max_entries) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  opens_.fetch_add(1, std::memory_order_relaxed);
  DIR* dir = opendir(full.c_str());
  if (dir == nullptr) return ::tracehealth::ErrnoToStatus(errno, path);
  std::vector<std::string> names;
  absl::Status status;
  while (true) {
    errno = 0;
    struct dirent* e = readdir(dir);
    if (e == nullptr) {
      if (errno != 0) status = ::tracehealth::ErrnoToStatus(errno, path);
      break;
    }
    absl::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (names.size() >= max_entries) {
      status = absl::ResourceExhaustedError(
          absl::StrCat(path, ": more than ", max_entries, " entries"));
      break;
    }
    names.emplace_back(name);
  }
  closedir(dir);
  if (!status.ok()) return status;
  return names;
}

absl::StatusOr<std::string> HostFs::ReadLink(absl::string_view path) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  opens_.fetch_add(1, std::memory_order_relaxed);
  char buf[4096];
  ssize_t n = readlink(full.c_str(), buf, sizeof(buf));
  if (n < 0) return ::tracehealth::ErrnoToStatus(errno, path);
  return std::string(buf, static_cast<size_t>(n));
}

bool HostFs::Exists(absl::string_view path) const {
  absl::StatusOr<std::string> full = Resolve(path);
  if (!full.ok()) return false;
  struct stat st;
  return stat(full->c_str(), &st) == 0;
}

}  // namespace tracehealth::agent
