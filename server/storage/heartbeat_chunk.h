// Heartbeats: reports whose material content (common/report/material.h)
// equals their host's stored full report are stored as a few numbers in a
// chunk (one row for up to kMaxBeats consecutive heartbeats of a host on the
// same full report) instead of whole.
//
// A chunk's bytes: its first beat with every value absolute, then per beat
// the differences from the previous one: varint seq step, zigzag varint
// change of the observation step (delta of delta, ns), zigzag varint change
// of (received - observed), zigzag varint change of threads (+1, 0 for
// none), and a flags byte saying for each of the three prediction columns
// whether it is as before, absent, or follows (8 bytes). A steady host's
// beat takes about 8 bytes, one whose thread count moves every cycle 16.
//
// Thread safety: a ChunkEncoder is used by one thread; DecodeChunk is pure.
#ifndef TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_CHUNK_H_
#define TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_CHUNK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::server {

// What a heartbeat stores of its report.
struct Beat {
  uint64_t seq = 0;
  int64_t observed_at_ns = 0;
  int64_t received_at_ns = 0;
  std::optional<uint64_t> threads;  // snapshot.threads.total
  std::optional<double> attach_latency_seconds;
  std::optional<double> pool_budget_ratio;
  std::optional<double> purge_seconds;

  bool operator==(const Beat& o) const {
    return seq == o.seq && observed_at_ns == o.observed_at_ns &&
           received_at_ns == o.received_at_ns && threads == o.threads &&
           attach_latency_seconds == o.attach_latency_seconds &&
           pool_budget_ratio == o.pool_budget_ratio &&
           purge_seconds == o.purge_seconds;
  }
};

class ChunkEncoder {
 public:
  // At most this many beats a chunk (an hour of 15 s reports).
  static constexpr int kMaxBeats = 240;
  // A chunk's beats are observed in order within this span of its first
  // (a chunk is then found by its first beat's time: a store indexes it and
  // reads the chunks of an hour from an hour before it).
  static constexpr int64_t kMaxSpanNs = int64_t{3600} * 1000000000;

  // The bytes that start a new chunk with `b`.
  std::string Start(const Beat& b);
  // The bytes to append to the chunk for `b` (b.seq > the previous seq).
  std::string Append(const Beat& b);
  int beats() const { return beats_; }
  bool full() const { return beats_ >= kMaxBeats; }
  // Whether `b` may be appended to this chunk (Append) rather than start a
  // new one: the chunk has a beat, is not full, `b` is observed no earlier
  // than its last beat and less than kMaxSpanNs after its first.
  bool Takes(const Beat& b) const {
    return beats_ > 0 && !full() && b.observed_at_ns >= prev_.observed_at_ns &&
           b.observed_at_ns - first_observed_ns_ < kMaxSpanNs;
  }

 private:
  int64_t first_observed_ns_ = 0;
  Beat prev_;
  int64_t prev_step_ = 0;  // observation step of the previous beat
  int beats_ = 0;
};

// The ranges [lo, hi] of chunk first-beat times that hold every chunk with
// a beat observed in [from_ns, to_ns): from kMaxSpanNs before from_ns to
// to_ns - 1, and, for chunks written before the span bound (whose first
// beats are at or before `unbounded_through_ns`), everything up to that.
std::vector<std::pair<int64_t, int64_t>> ChunkStartRanges(
    int64_t from_ns, int64_t to_ns,
    std::optional<int64_t> unbounded_through_ns);

// The beats of a chunk, in order. DataLoss when the bytes do not decode.
absl::StatusOr<std::vector<Beat>> DecodeChunk(absl::string_view bytes);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_HEARTBEAT_CHUNK_H_
