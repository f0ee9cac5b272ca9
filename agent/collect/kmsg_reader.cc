#include "agent/collect/kmsg_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kFileChunk = 64 * 1024;
// A read(2) of /dev/kmsg fails with EINVAL, without consuming the record,
// when the buffer is smaller than the record: leave room beyond the bound.
constexpr size_t kDeviceBuffer = 16 * 1024;

std::string Join(const std::string& root) {
  if (root.empty() || root == "/") return kKmsgPath;
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return absl::StrCat(r, kKmsgPath);
}

}  // namespace

KmsgReader::KmsgReader(std::string root, Options options)
    : path_(Join(root)), options_(options) {}

KmsgReader::~KmsgReader() { Close(); }

void KmsgReader::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

absl::Status KmsgReader::Open() {
  fd_ = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) return ErrnoToStatus(errno, kKmsgPath);
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    const int err = errno;
    Close();
    return ErrnoToStatus(err, kKmsgPath);
  }
  device_ = S_ISCHR(st.st_mode);
  inode_ = st.st_ino;
  offset_ = 0;
  skipping_line_ = false;
  return absl::OkStatus();
}

absl::StatusOr<bool> KmsgReader::Read(
    const std::function<bool()>& more,
    const std::function<void(const KmsgRecord&)>& on_record) {
  if (fd_ < 0) {
    absl::Status st = Open();
    if (!st.ok()) return st;
  }
  return device_ ? ReadDevice(more, on_record)
                 : ReadRegularFile(more, on_record);
}

void KmsgReader::Deliver(
    absl::string_view bytes,
    const std::function<void(const KmsgRecord&)>& on_record) {
  if (bytes.size() > options_.max_record_bytes) {
    ++counts_.oversized;
    return;
  }
  absl::StatusOr<KmsgRecord> r = ParseKmsgRecord(bytes);
  if (r.ok()) {
    on_record(*r);
  } else if (absl::IsDataLoss(r.status())) {
    ++counts_.truncated;
  } else {
    ++counts_.malformed;
  }
}

absl::StatusOr<bool> KmsgReader::ReadDevice(
    const std::function<bool()>& more,
    const std::function<void(const KmsgRecord&)>& on_record) {
  std::vector<char> buf(std::max(kDeviceBuffer, options_.max_record_bytes + 1));
  for (size_t records = 0; records < options_.max_records && more();) {
    const ssize_t n = read(fd_, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return true;  // nothing more now
      if (errno == EPIPE) {
        ++counts_.overruns;
        continue;
      }
      if (errno == EINVAL) {
        return absl::ResourceExhaustedError(absl::StrCat(
            kKmsgPath, ": a record longer than ", buf.size(), " bytes"));
      }
      return ErrnoToStatus(errno, kKmsgPath);
    }
    if (n == 0) return true;
    ++records;
    absl::string_view bytes(buf.data(), static_cast<size_t>(n));
    // The record's text ends at its first newline; dictionary lines follow.
    Deliver(bytes, on_record);
  }
  return false;
}

absl::StatusOr<bool> KmsgReader::ReadRegularFile(
    const std::function<bool()>& more,
    const std::function<void(const KmsgRecord&)>& on_record) {
  struct stat st;
  if (stat(path_.c_str(), &st) != 0) {
    const int err = errno;
    Close();
    return ErrnoToStatus(err, kKmsgPath);
  }
  if (st.st_ino != inode_ || st.st_size < offset_) {
    // Replaced or cut shorter: read the new file from its start.
    Close();
    absl::Status opened = Open();
    if (!opened.ok()) return opened;
  }
  std::string chunk(kFileChunk, '\0');
  std::string line;  // the line being assembled across chunks
  off_t read_at = offset_;
  size_t records = 0;
  for (;;) {
    const ssize_t n = pread(fd_, chunk.data(), chunk.size(), read_at);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoToStatus(errno, kKmsgPath);
    }
    if (n == 0) return true;  // a partial last line waits
    const off_t chunk_start = read_at;
    read_at += n;
    absl::string_view data(chunk.data(), static_cast<size_t>(n));
    size_t pos = 0;
    while (pos < data.size()) {
      const size_t nl = data.find('\n', pos);
      if (skipping_line_) {
        if (nl == absl::string_view::npos) {
          offset_ = read_at;
          break;
        }
        skipping_line_ = false;
        pos = nl + 1;
        offset_ = chunk_start + static_cast<off_t>(pos);
        continue;
      }
      if (nl == absl::string_view::npos) {
        absl::StrAppend(&line, data.substr(pos));
        if (line.size() > options_.max_record_bytes) {
          // Too long to hold: skipped up to its end, never buffered whole.
          if (line[0] != ' ') ++counts_.oversized;
          line.clear();
          skipping_line_ = true;
          offset_ = read_at;
        }
        break;
      }
      if (records >= options_.max_records || !more()) return false;
      absl::StrAppend(&line, data.substr(pos, nl - pos));
      pos = nl + 1;
      offset_ = chunk_start + static_cast<off_t>(pos);
      // Dictionary lines belong to the record before them.
      if (!line.empty() && line[0] != ' ') {
        ++records;
        Deliver(line, on_record);
      }
      line.clear();
    }
  }
}

}  // namespace tracehealth::agent
