#include "common/procfs/host_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace tracehealth {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMinFileBuffer = 4 << 10;
constexpr size_t kMinLineBuffer = 64 << 10;
constexpr size_t kMinDirBuffer = 4 << 10;
constexpr size_t kMaxBuffer = 4 << 20;
// From this size on a read buffer is mapped directly (see ReadBuffer).
constexpr size_t kMapThreshold = 256 << 10;

// The first buffer for an input whose last complete read was `last_bytes`:
// one byte more, so that a file of the same size ends in the buffer's
// first fill, rounded up to whole pages and kept within [min_size, max].
size_t FirstBuffer(uint64_t last_bytes, size_t min_size) {
  const uint64_t want = (last_bytes + 1 + kPage - 1) / kPage * kPage;
  return static_cast<size_t>(
      std::clamp<uint64_t>(want, min_size, std::max(min_size, kMaxBuffer)));
}

// A read buffer. Large ones come straight from mmap and go back with munmap:
// once malloc has freed a block this size it keeps the next one in its heap,
// and the agent's resident size would keep the largest buffer it ever used.
class ReadBuffer {
 public:
  explicit ReadBuffer(size_t size) { Allocate(size); }
  ~ReadBuffer() { Release(); }
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  // Replaces the buffer by one of `size` bytes (the content is not kept).
  void Resize(size_t size) {
    Release();
    Allocate(size);
  }

 private:
  void Allocate(size_t size) {
    size_ = size;
    mapped_ = size >= kMapThreshold;
    if (mapped_) {
      void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<char*>(p);
        return;
      }
      mapped_ = false;
    }
    data_ = new char[size];
  }
  void Release() {
    if (mapped_) {
      munmap(data_, size_);
    } else {
      delete[] data_;
    }
    data_ = nullptr;
  }

  char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

// An open file descriptor, closed (and the close charged) on scope exit.
class OpenFd {
 public:
  OpenFd(int fd, IoCost* cost) : fd_(fd), cost_(cost) {}
  ~OpenFd() {
    if (fd_ >= 0) {
      close(fd_);
      ++cost_->syscalls;
    }
  }
  OpenFd(const OpenFd&) = delete;
  OpenFd& operator=(const OpenFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
  IoCost* cost_;
};

// open() of `full`, charged to `cost`.
int OpenCharged(const std::string& full, int flags, IoCost* cost) {
  ++cost->opens;
  ++cost->syscalls;
  return open(full.c_str(), flags | O_CLOEXEC);
}

// read() that retries on EINTR, each call charged to `cost`.
ssize_t ReadSome(int fd, char* buf, size_t n, IoCost* cost) {
  ssize_t r;
  do {
    ++cost->read_calls;
    ++cost->syscalls;
    r = read(fd, buf, n);
  } while (r < 0 && errno == EINTR);
  if (r > 0) cost->bytes += static_cast<uint64_t>(r);
  return r;
}

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
}

}  // namespace

std::string CostInput(absl::string_view path) {
  if (std::none_of(path.begin(), path.end(),
                   [](char c) { return absl::ascii_isdigit(c); })) {
    return std::string(path);
  }
  std::string out;
  out.reserve(path.size());
  bool first = true;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (!first) out.push_back('/');
    first = false;
    if (AllDigits(part)) {
      out.push_back('*');
    } else {
      out.append(part.data(), part.size());
    }
  }
  return out;
}

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

void HostFs::Charge(const std::string& input, const IoCost& cost,
                    const uint64_t* complete_bytes) const {
  absl::MutexLock lock(&mu_);
  Input& in = inputs_[input];
  in.pending += cost;
  if (complete_bytes != nullptr) in.last_bytes = *complete_bytes;
  total_ += cost;
}

uint64_t HostFs::LastBytes(const std::string& input) const {
  absl::MutexLock lock(&mu_);
  auto it = inputs_.find(input);
  return it == inputs_.end() ? 0 : it->second.last_bytes;
}

uint64_t HostFs::opens() const {
  absl::MutexLock lock(&mu_);
  return total_.opens;
}

IoCost HostFs::total() const {
  absl::MutexLock lock(&mu_);
  return total_;
}

InputCosts HostFs::TakeCosts() const {
  InputCosts out;
  absl::MutexLock lock(&mu_);
  for (auto& [input, in] : inputs_) {
    if (in.pending.syscalls == 0) continue;
    out.emplace_back(input, in.pending);
    in.pending = IoCost();
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

absl::StatusOr<std::string> HostFs::ReadFile(absl::string_view path,
                                             size_t max_bytes) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  const std::string input = CostInput(path);
  // Up to one byte past the limit: that byte says the file is too large.
  const size_t limit = max_bytes == std::numeric_limits<size_t>::max()
                           ? max_bytes
                           : max_bytes + 1;
  const size_t first =
      std::min(FirstBuffer(LastBytes(input), kMinFileBuffer), limit);
  IoCost cost;
  absl::Status status;
  std::string content;
  {
    OpenFd fd(OpenCharged(full, O_RDONLY, &cost), &cost);
    if (fd.get() < 0) {
      status = ::tracehealth::ErrnoToStatus(errno, path);
    } else {
      content.resize(first);
      size_t size = 0;
      while (true) {
        if (size == content.size()) {
          if (size >= limit) {
            status = absl::ResourceExhaustedError(
                absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
            break;
          }
          content.resize(std::min(limit, std::max<size_t>(1, size) * 2));
        }
        ssize_t n =
            ReadSome(fd.get(), &content[size], content.size() - size, &cost);
        if (n < 0) {
          status = ::tracehealth::ErrnoToStatus(errno, path);
          break;
        }
        if (n == 0) break;
        size += static_cast<size_t>(n);
      }
      content.resize(size);
    }
  }
  const uint64_t bytes = content.size();
  Charge(input, cost, status.ok() ? &bytes : nullptr);
  if (!status.ok()) return status;
  return content;
}

absl::StatusOr<uint64_t> HostFs::ReadLines(
    absl::string_view path, uint64_t max_bytes,
    const std::function<void(absl::string_view)>& on_line) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  const std::string input = CostInput(path);
  IoCost cost;
  absl::Status status;
  uint64_t total = 0;
  uint64_t lines = 0;
  {
    OpenFd fd(OpenCharged(full, O_RDONLY, &cost), &cost);
    if (fd.get() < 0) {
      status = ::tracehealth::ErrnoToStatus(errno, path);
    } else {
      ReadBuffer buf(FirstBuffer(LastBytes(input), kMinLineBuffer));
      std::string pending;  // a line split across reads
      while (true) {
        ssize_t n = ReadSome(fd.get(), buf.data(), buf.size(), &cost);
        if (n < 0) {
          status = ::tracehealth::ErrnoToStatus(errno, path);
          break;
        }
        if (n == 0) break;
        total += static_cast<uint64_t>(n);
        if (total > max_bytes) {
          status = absl::ResourceExhaustedError(
              absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
          break;
        }
        absl::string_view chunk(buf.data(), static_cast<size_t>(n));
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
        // A full buffer: there is more; take it in larger reads.
        if (static_cast<size_t>(n) == buf.size() && buf.size() < kMaxBuffer) {
          buf.Resize(std::min(kMaxBuffer, buf.size() * 2));
        }
      }
      if (status.ok() && !pending.empty()) {
        on_line(pending);
        ++lines;
      }
    }
  }
  Charge(input, cost, status.ok() ? &total : nullptr);
  if (!status.ok()) return status;
  return lines;
}

absl::StatusOr<std::vector<std::string>> HostFs::ListDir(
    absl::string_view path, size_t max_entries) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  const std::string input = CostInput(path);
  IoCost cost;
  absl::Status status;
  std::vector<std::string> names;
  uint64_t total = 0;
  {
    OpenFd fd(OpenCharged(full, O_RDONLY | O_DIRECTORY, &cost), &cost);
    if (fd.get() < 0) {
      status = ::tracehealth::ErrnoToStatus(errno, path);
    } else {
      // getdents64 directly (not readdir) so that every call is counted.
      ReadBuffer buf(FirstBuffer(LastBytes(input), kMinDirBuffer));
      while (status.ok()) {
        ssize_t n;
        do {
          ++cost.read_calls;
          ++cost.syscalls;
          n = getdents64(fd.get(), buf.data(), buf.size());
        } while (n < 0 && errno == EINTR);
        if (n < 0) {
          status = ::tracehealth::ErrnoToStatus(errno, path);
          break;
        }
        if (n == 0) break;
        cost.bytes += static_cast<uint64_t>(n);
        total += static_cast<uint64_t>(n);
        for (ssize_t off = 0; off < n;) {
          struct dirent64 e;
          // Records are 8-byte aligned in the buffer; copy the fixed part.
          std::memcpy(&e, buf.data() + off, offsetof(struct dirent64, d_name));
          const char* name =
              buf.data() + off + offsetof(struct dirent64, d_name);
          off += e.d_reclen;
          absl::string_view n_view(name);
          if (n_view == "." || n_view == "..") continue;
          if (names.size() >= max_entries) {
            status = absl::ResourceExhaustedError(
                absl::StrCat(path, ": more than ", max_entries, " entries"));
            break;
          }
          names.emplace_back(n_view);
        }
        // Less room left than one more record: there is probably more.
        if (static_cast<size_t>(n) + sizeof(struct dirent64) > buf.size() &&
            buf.size() < kMaxBuffer) {
          buf.Resize(std::min(kMaxBuffer, buf.size() * 2));
        }
      }
    }
  }
  Charge(input, cost, status.ok() ? &total : nullptr);
  if (!status.ok()) return status;
  return names;
}

absl::StatusOr<std::string> HostFs::ReadLink(absl::string_view path) const {
  TH_ASSIGN_OR_RETURN(std::string full, Resolve(path));
  IoCost cost;
  cost.opens = 1;
  cost.syscalls = 1;
  char buf[4096];
  ssize_t n = readlink(full.c_str(), buf, sizeof(buf));
  const int err = errno;
  Charge(CostInput(path), cost);
  if (n < 0) return ::tracehealth::ErrnoToStatus(err, path);
  return std::string(buf, static_cast<size_t>(n));
}

bool HostFs::Exists(absl::string_view path) const {
  absl::StatusOr<std::string> full = Resolve(path);
  if (!full.ok()) return false;
  struct stat st;
  const bool exists = stat(full->c_str(), &st) == 0;
  IoCost cost;
  cost.syscalls = 1;
  Charge(CostInput(path), cost);
  return exists;
}

}  // namespace tracehealth
