#include "server/storage/heartbeat_chunk.h"

#include <cstring>
#include <limits>

#include "absl/status/status.h"

namespace tracehealth::server {
namespace {

void PutVarint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutZigzag(int64_t v, std::string& out) {
  PutVarint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63),
            out);
}

void PutDouble(double d, std::string& out) {
  char b[8];
  std::memcpy(b, &d, 8);
  out.append(b, 8);
}

uint64_t ThreadsCode(const std::optional<uint64_t>& t) {
  return t.has_value() ? *t + 1 : 0;
}

// Two bits per column: 0 as before, 1 absent, 2 a value follows.
int ColumnFlag(const std::optional<double>& now,
               const std::optional<double>* before) {
  if (before != nullptr && now == *before) return 0;
  return now.has_value() ? 2 : 1;
}

struct Reader {
  absl::string_view in;
  bool ok = true;

  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in.empty()) break;
      const uint8_t c = static_cast<uint8_t>(in[0]);
      in.remove_prefix(1);
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if ((c & 0x80) == 0) return v;
    }
    ok = false;
    return 0;
  }
  int64_t Zigzag() {
    const uint64_t u = Varint();
    return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  }
  double Double() {
    if (in.size() < 8) {
      ok = false;
      return 0;
    }
    double d;
    std::memcpy(&d, in.data(), 8);
    in.remove_prefix(8);
    return d;
  }
  uint8_t Byte() {
    if (in.empty()) {
      ok = false;
      return 0;
    }
    const uint8_t c = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    return c;
  }
};

void PutColumns(const Beat& b, const Beat* prev, std::string& out) {
  const std::optional<double>* cols[3] = {
      &b.attach_latency_seconds, &b.pool_budget_ratio, &b.purge_seconds};
  const std::optional<double>* before[3] = {
      prev ? &prev->attach_latency_seconds : nullptr,
      prev ? &prev->pool_budget_ratio : nullptr,
      prev ? &prev->purge_seconds : nullptr};
  int flags = 0;
  for (int i = 0; i < 3; ++i)
    flags |= ColumnFlag(*cols[i], before[i]) << (2 * i);
  out.push_back(static_cast<char>(flags));
  for (int i = 0; i < 3; ++i) {
    if (((flags >> (2 * i)) & 3) == 2) PutDouble(**cols[i], out);
  }
}

void ReadColumns(Reader& r, Beat& b) {
  std::optional<double>* cols[3] = {&b.attach_latency_seconds,
                                    &b.pool_budget_ratio, &b.purge_seconds};
  const int flags = r.Byte();
  for (int i = 0; i < 3; ++i) {
    switch ((flags >> (2 * i)) & 3) {
      case 0:
        break;
      case 1:
        cols[i]->reset();
        break;
      case 2:
        *cols[i] = r.Double();
        break;
      default:
        r.ok = false;
    }
  }
}

}  // namespace

std::string ChunkEncoder::Start(const Beat& b) {
  std::string out;
  PutVarint(b.seq, out);
  PutZigzag(b.observed_at_ns, out);
  PutZigzag(b.received_at_ns - b.observed_at_ns, out);
  PutVarint(ThreadsCode(b.threads), out);
  PutColumns(b, nullptr, out);
  first_observed_ns_ = b.observed_at_ns;
  prev_ = b;
  prev_step_ = 0;
  beats_ = 1;
  return out;
}

std::string ChunkEncoder::Append(const Beat& b) {
  std::string out;
  const int64_t step = b.observed_at_ns - prev_.observed_at_ns;
  PutVarint(b.seq - prev_.seq, out);
  PutZigzag(step - prev_step_, out);
  PutZigzag((b.received_at_ns - b.observed_at_ns) -
                (prev_.received_at_ns - prev_.observed_at_ns),
            out);
  PutZigzag(
      static_cast<int64_t>(ThreadsCode(b.threads) - ThreadsCode(prev_.threads)),
      out);
  PutColumns(b, &prev_, out);
  prev_ = b;
  prev_step_ = step;
  ++beats_;
  return out;
}

absl::StatusOr<std::vector<Beat>> DecodeChunk(absl::string_view bytes) {
  std::vector<Beat> out;
  Reader r{bytes};
  if (bytes.empty()) return out;
  Beat b;
  b.seq = r.Varint();
  b.observed_at_ns = r.Zigzag();
  b.received_at_ns = b.observed_at_ns + r.Zigzag();
  uint64_t threads = r.Varint();
  ReadColumns(r, b);
  if (threads != 0) b.threads = threads - 1;
  out.push_back(b);
  int64_t step = 0;
  while (r.ok && !r.in.empty()) {
    Beat n = out.back();
    n.seq += r.Varint();
    step += r.Zigzag();
    n.observed_at_ns += step;
    const int64_t offset =
        (out.back().received_at_ns - out.back().observed_at_ns) + r.Zigzag();
    n.received_at_ns = n.observed_at_ns + offset;
    threads += static_cast<uint64_t>(r.Zigzag());
    if (threads == 0) {
      n.threads.reset();
    } else {
      n.threads = threads - 1;
    }
    ReadColumns(r, n);
    out.push_back(n);
  }
  if (!r.ok) return absl::DataLossError("heartbeat chunk does not decode");
  return out;
}

std::vector<std::pair<int64_t, int64_t>> ChunkStartRanges(
    int64_t from_ns, int64_t to_ns,
    std::optional<int64_t> unbounded_through_ns) {
  const int64_t bounded_from = from_ns - ChunkEncoder::kMaxSpanNs;
  std::vector<std::pair<int64_t, int64_t>> ranges = {{bounded_from, to_ns - 1}};
  if (unbounded_through_ns.has_value()) {
    if (*unbounded_through_ns < bounded_from) {
      ranges.push_back(
          {std::numeric_limits<int64_t>::min(), *unbounded_through_ns});
    } else {
      ranges[0].first = std::numeric_limits<int64_t>::min();
    }
  }
  return ranges;
}

}  // namespace tracehealth::server
