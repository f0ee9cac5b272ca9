// Spool: a bounded on-disk queue of serialized HostReports waiting for the
// server's ack, kept in order of seq and surviving agent restarts.
//
// Layout: directory of append-only segment files "seg-<first seq>.log".
// Each record is
//   magic "THSP" (u32 LE) | payload length (u32 LE) | seq (u64 LE) |
//   crc32 of seq bytes + payload (u32 LE, zlib crc32) | payload
// A file "floor" (key=value, written atomically) holds the highest seq
// removed from the head (acked or dropped); records at or below it are not
// loaded again.
//
// Durability: every Append is written and fsync'd before it returns (one
// fsync per report, i.e. per cycle), and new segments fsync their directory,
// so a report in the spool survives a crash. The floor is replaced atomically
// after every ack but not fsync'd: after a crash a few acked reports may be
// sent again, which the server acknowledges without storing them twice.
//
// Bound: the payload+header bytes of live records never exceed `max_bytes`
// after an Append; the oldest records are dropped (and counted) to make room.
// Disk use is at most max_bytes plus one segment of fully consumed records.
//
// Corruption: on Open, records with a bad magic, CRC or length are skipped
// and counted (the reader resynchronises on the next magic); a truncated
// tail is counted once and new records go to a new segment.
//
// Thread safety: all methods are thread-safe.
#ifndef TRACEHEALTH_AGENT_UPLINK_SPOOL_H_
#define TRACEHEALTH_AGENT_UPLINK_SPOOL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tracehealth::agent {

class Spool {
 public:
  // Opens or creates the spool in `dir`. `max_bytes` must be >= 4096.
  // `segment_bytes` 0 picks max(64 KiB, max_bytes / 8).
  static absl::StatusOr<std::unique_ptr<Spool>> Open(
      const std::string& dir, uint64_t max_bytes, uint64_t segment_bytes = 0);
  ~Spool();

  // Appends a record. `seq` must be greater than every seq appended or
  // loaded before (FailedPrecondition otherwise); a payload larger than
  // max_bytes is InvalidArgument. Drops the oldest records while over the
  // bound. Errors: the write/fsync failure (the record is then not spooled).
  absl::Status Append(uint64_t seq, absl::string_view payload);

  // The first live record with seq > `after`, if any: (seq, payload).
  // Unreadable records are dropped and counted as corrupt.
  std::optional<std::pair<uint64_t, std::string>> NextAfter(uint64_t after);

  // Removes every record with seq <= `seq` (the server stored them).
  absl::Status Ack(uint64_t seq);
  // Removes one record (the server rejected it). Returns whether it was
  // spooled.
  bool Remove(uint64_t seq);

  uint64_t depth() const;
  uint64_t bytes() const;
  uint64_t dropped_total() const;
  uint64_t corrupt_total() const;
  // Highest seq ever appended or loaded (0 when none).
  uint64_t last_seq() const;

 private:
  struct Segment {
    uint64_t first_seq = 0;
    std::string path;
    uint64_t size = 0;
    uint64_t live = 0;
    int fd = -1;  // open for append: the newest segment only
  };
  struct Loc {
    Segment* segment;
    uint64_t offset;  // of the payload
    uint32_t length;
  };

  Spool(std::string dir, uint64_t max_bytes, uint64_t segment_bytes)
      : dir_(std::move(dir)),
        max_bytes_(max_bytes),
        segment_bytes_(segment_bytes) {}
  absl::Status Load() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void LoadSegment(Segment* seg, const std::string& data)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartSegment(uint64_t first_seq)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets `it`, deleting its segment when nothing live remains in it.
  std::map<uint64_t, Loc>::iterator Erase(std::map<uint64_t, Loc>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteFloor() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const uint64_t max_bytes_;
  const uint64_t segment_bytes_;

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Segment>> segments_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Loc> index_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t floor_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t corrupt_ ABSL_GUARDED_BY(mu_) = 0;
};

// Size of a record's header in the segment files.
inline constexpr uint64_t kSpoolRecordHeader = 20;

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_UPLINK_SPOOL_H_
