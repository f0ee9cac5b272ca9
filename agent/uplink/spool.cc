#include "agent/uplink/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "agent/state/state_file.h"
#include "common/status.h"

namespace tracehealth::agent {
namespace {

constexpr uint32_t kMagic = 0x50534854;  // "THSP" little-endian

void PutU32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint32_t RecordCrc(const char* seq_bytes, absl::string_view payload) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(seq_bytes), 8);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()),
              static_cast<uInt>(payload.size()));
  return static_cast<uint32_t>(crc);
}

absl::Status Errno(const std::string& what) {
  return ::tracehealth::ErrnoToStatus(errno, what);
}

void FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(const std::string& dir,
                                                   uint64_t max_bytes,
                                                   uint64_t segment_bytes) {
  if (max_bytes < 4096) {
    return absl::InvalidArgumentError("spool: max_bytes must be >= 4096");
  }
  if (segment_bytes == 0)
    segment_bytes = std::max<uint64_t>(64 << 10, max_bytes / 8);
  TH_RETURN_IF_ERROR(MakeDirs(dir));
  std::unique_ptr<Spool> spool(new Spool(dir, max_bytes, segment_bytes));
  absl::MutexLock lock(&spool->mu_);
  TH_RETURN_IF_ERROR(spool->Load());
  return spool;
}

Spool::~Spool() {
  absl::MutexLock lock(&mu_);
  for (auto& seg : segments_) {
    if (seg->fd >= 0) close(seg->fd);
  }
}

absl::Status Spool::Load() {
  absl::StatusOr<std::string> floor_text = ReadWholeFile(dir_ + "/floor");
  if (floor_text.ok()) {
    // An empty or unreadable floor (it is not fsync'd) only means acked
    // records may be sent again.
    auto kv = ParseKeyValues(*floor_text);
    if (!kv.ok() || !kv->count("floor") ||
        !absl::SimpleAtoi((*kv)["floor"], &floor_)) {
      floor_ = 0;
    }
  }
  last_seq_ = floor_;
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return Errno(dir_);
  std::vector<std::pair<uint64_t, std::string>> files;
  while (struct dirent* e = readdir(d)) {
    absl::string_view name(e->d_name);
    uint64_t first;
    if (absl::ConsumePrefix(&name, "seg-") &&
        absl::ConsumeSuffix(&name, ".log") && absl::SimpleAtoi(name, &first)) {
      files.emplace_back(first, absl::StrCat(dir_, "/", e->d_name));
    }
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  for (auto& [first, path] : files) {
    absl::StatusOr<std::string> data = ReadWholeFile(path);
    if (!data.ok()) {
      ++corrupt_;
      continue;
    }
    auto seg = std::make_unique<Segment>();
    seg->first_seq = first;
    seg->path = path;
    seg->size = data->size();
    LoadSegment(seg.get(), *data);
    if (seg->live == 0) {
      unlink(path.c_str());
      continue;
    }
    segments_.push_back(std::move(seg));
  }
  // Records dropped by the byte bound while the agent was down (a smaller
  // --spool_max_bytes) are counted like any other drop.
  while (bytes_ > max_bytes_ && !index_.empty()) {
    floor_ = index_.begin()->first;
    Erase(index_.begin());
    ++dropped_;
  }
  return absl::OkStatus();
}

void Spool::LoadSegment(Segment* seg, const std::string& data) {
  size_t pos = 0;
  bool in_garbage = false;
  while (pos < data.size()) {
    bool ok = false;
    uint32_t len = 0;
    uint64_t seq = 0;
    if (data.size() - pos >= kSpoolRecordHeader &&
        GetU32(data.data() + pos) == kMagic) {
      len = GetU32(data.data() + pos + 4);
      seq = GetU64(data.data() + pos + 8);
      uint32_t crc = GetU32(data.data() + pos + 16);
      if (len <= data.size() - pos - kSpoolRecordHeader) {
        absl::string_view payload(data.data() + pos + kSpoolRecordHeader, len);
        ok = RecordCrc(data.data() + pos + 8, payload) == crc;
      }
    }
    if (!ok) {
      // Count one corrupt region, then resynchronise on the next magic.
      if (!in_garbage) ++corrupt_;
      in_garbage = true;
      ++pos;
      while (pos + 4 <= data.size() && GetU32(data.data() + pos) != kMagic)
        ++pos;
      if (pos + 4 > data.size()) break;
      continue;
    }
    in_garbage = false;
    if (seq > floor_ && seq > last_seq_) {
      index_[seq] = Loc{seg, pos + kSpoolRecordHeader, len};
      ++seg->live;
      bytes_ += kSpoolRecordHeader + len;
      last_seq_ = seq;
    }
    pos += kSpoolRecordHeader + len;
  }
}

absl::Status Spool::StartSegment(uint64_t first_seq) {
  if (!segments_.empty() && segments_.back()->fd >= 0) {
    close(segments_.back()->fd);
    segments_.back()->fd = -1;
    if (segments_.back()->live == 0) {
      unlink(segments_.back()->path.c_str());
      segments_.pop_back();
    }
  }
  auto seg = std::make_unique<Segment>();
  seg->first_seq = first_seq;
  seg->path = absl::StrFormat("%s/seg-%020u.log", dir_, first_seq);
  seg->fd =
      open(seg->path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (seg->fd < 0) return Errno(seg->path);
  FsyncDir(dir_);
  segments_.push_back(std::move(seg));
  return absl::OkStatus();
}

absl::Status Spool::Append(uint64_t seq, absl::string_view payload) {
  if (payload.size() + kSpoolRecordHeader > max_bytes_ ||
      payload.size() > UINT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "spool: record of ", payload.size(), " bytes exceeds the spool bound"));
  }
  absl::MutexLock lock(&mu_);
  if (seq <= last_seq_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "spool: seq ", seq, " not above the last spooled seq ", last_seq_));
  }
  // Loaded segments are never appended to (their tail may be torn).
  if (segments_.empty() || segments_.back()->fd < 0 ||
      segments_.back()->size >= segment_bytes_) {
    TH_RETURN_IF_ERROR(StartSegment(seq));
  }
  Segment* seg = segments_.back().get();
  std::string record(kSpoolRecordHeader + payload.size(), '\0');
  PutU32(record.data(), kMagic);
  PutU32(record.data() + 4, static_cast<uint32_t>(payload.size()));
  PutU64(record.data() + 8, seq);
  PutU32(record.data() + 16, RecordCrc(record.data() + 8, payload));
  std::memcpy(record.data() + kSpoolRecordHeader, payload.data(),
              payload.size());
  size_t done = 0;
  while (done < record.size()) {
    ssize_t n = write(seg->fd, record.data() + done, record.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = Errno(seg->path);
      // The segment may now end in a partial record: stop appending to it.
      close(seg->fd);
      seg->fd = -1;
      seg->size += done;
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(seg->fd) != 0) {
    absl::Status s = Errno(seg->path);
    close(seg->fd);
    seg->fd = -1;
    seg->size += done;
    return s;
  }
  index_[seq] = Loc{seg, seg->size + kSpoolRecordHeader,
                    static_cast<uint32_t>(payload.size())};
  seg->size += record.size();
  ++seg->live;
  bytes_ += record.size();
  last_seq_ = seq;
  bool dropped_any = false;
  while (bytes_ > max_bytes_ && index_.size() > 1) {
    floor_ = std::max(floor_, index_.begin()->first);
    Erase(index_.begin());
    ++dropped_;
    dropped_any = true;
  }
  if (dropped_any) return WriteFloor();
  return absl::OkStatus();
}

std::map<uint64_t, Spool::Loc>::iterator Spool::Erase(
    std::map<uint64_t, Loc>::iterator it) {
  Segment* seg = it->second.segment;
  bytes_ -= kSpoolRecordHeader + it->second.length;
  auto next = index_.erase(it);
  if (--seg->live == 0 && seg->fd < 0) {
    unlink(seg->path.c_str());
    segments_.erase(std::find_if(
        segments_.begin(), segments_.end(),
        [seg](const std::unique_ptr<Segment>& s) { return s.get() == seg; }));
  }
  return next;
}

absl::Status Spool::WriteFloor() {
  // Not fsync'd: a floor lost in a crash only means some acked reports are
  // sent again, which the server acknowledges without storing them twice.
  return WriteFileAtomically(dir_ + "/floor",
                             FormatKeyValues({{"floor", absl::StrCat(floor_)}}),
                             /*durable=*/false);
}

std::optional<std::pair<uint64_t, std::string>> Spool::NextAfter(
    uint64_t after) {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto it = index_.upper_bound(after);
    if (it == index_.end()) return std::nullopt;
    const Loc& loc = it->second;
    std::string payload(loc.length, '\0');
    int fd = open(loc.segment->path.c_str(), O_RDONLY | O_CLOEXEC);
    bool ok = false;
    if (fd >= 0) {
      char header[kSpoolRecordHeader];
      ssize_t h =
          pread(fd, header, sizeof(header), loc.offset - kSpoolRecordHeader);
      ssize_t n = pread(fd, payload.data(), loc.length, loc.offset);
      close(fd);
      ok = h == static_cast<ssize_t>(sizeof(header)) &&
           n == static_cast<ssize_t>(loc.length) &&
           RecordCrc(header + 8, payload) == GetU32(header + 16);
    }
    if (ok) return std::make_pair(it->first, std::move(payload));
    // The file changed under us (disk error, outside interference).
    ++corrupt_;
    Erase(it);
  }
}

absl::Status Spool::Ack(uint64_t seq) {
  absl::MutexLock lock(&mu_);
  if (seq <= floor_) return absl::OkStatus();
  auto it = index_.begin();
  while (it != index_.end() && it->first <= seq) it = Erase(it);
  floor_ = seq;
  return WriteFloor();
}

bool Spool::Remove(uint64_t seq) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(seq);
  if (it == index_.end()) return false;
  Erase(it);
  return true;
}

uint64_t Spool::depth() const {
  absl::MutexLock lock(&mu_);
  return index_.size();
}
uint64_t Spool::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}
uint64_t Spool::dropped_total() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}
uint64_t Spool::corrupt_total() const {
  absl::MutexLock lock(&mu_);
  return corrupt_;
}
uint64_t Spool::last_seq() const {
  absl::MutexLock lock(&mu_);
  return last_seq_;
}

}  // namespace tracehealth::agent
