#include "agent/calibrate/tracefs_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace tracehealth::agent {

absl::StatusOr<std::string> RootedPath(absl::string_view root,
                                       absl::string_view path) {
  if (!absl::StartsWith(path, "/") ||
      path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an absolute host path: ", path));
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("host path with '..': ", path));
    }
  }
  while (absl::EndsWith(root, "/")) root.remove_suffix(1);
  return absl::StrCat(root, path);
}

absl::Status WriteTracefsFile(absl::string_view root, absl::string_view path,
                              absl::string_view content) {
  absl::StatusOr<std::string> full = RootedPath(root, path);
  if (!full.ok()) return full.status();
  const int fd = open(full->c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, absl::StrCat("open ", path));
  absl::Status status;
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      status = ErrnoToStatus(
          n < 0 ? errno : EIO,
          absl::StrCat("write ", path, " '", content.substr(0, 64), "'"));
      break;
    }
    done += static_cast<size_t>(n);
  }
  // tracefs applies set_ftrace_filter at release: close() can fail too.
  if (close(fd) != 0 && status.ok()) {
    status = ErrnoToStatus(errno, absl::StrCat("close ", path));
  }
  return status;
}

absl::Status CheckWritable(absl::string_view root, absl::string_view path) {
  absl::StatusOr<std::string> full = RootedPath(root, path);
  if (!full.ok()) return full.status();
  if (access(full->c_str(), W_OK) != 0) {
    return ErrnoToStatus(errno, std::string(path));
  }
  return absl::OkStatus();
}

bool MountedReadOnly(absl::string_view mounts, absl::string_view mount_point) {
  for (absl::string_view line : absl::StrSplit(mounts, '\n')) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 4 || f[1] != mount_point) continue;
    for (absl::string_view opt : absl::StrSplit(f[3], ',')) {
      if (opt == "ro") return true;
    }
  }
  return false;
}

}  // namespace tracehealth::agent
