#include "common/read_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/status.h"

namespace tracehealth {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, path);
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = ErrnoToStatus(errno, path);
      close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

}  // namespace tracehealth
