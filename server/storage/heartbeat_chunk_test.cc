#include "server/storage/heartbeat_chunk.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

std::vector<Beat> Drifting(int n, bool steady) {
  std::vector<Beat> beats;
  for (int i = 0; i < n; ++i) {
    Beat b;
    b.seq = 100 + i + (i > 5 ? 2 : 0);  // a gap after the sixth
    b.observed_at_ns =
        1700000000000000000 + i * 15000000000LL + (i % 3) * 1234567;
    b.received_at_ns = b.observed_at_ns + 2000000 + (i % 2) * 777;
    if (i != 4) b.threads = steady ? 5000 : 5000 + (i * 37) % 11;
    b.attach_latency_seconds = steady ? 0.25 : 0.25 + i * 1e-4;
    if (i % 7 != 3) b.pool_budget_ratio = 0.5;
    b.purge_seconds = std::nullopt;
    beats.push_back(b);
  }
  return beats;
}

std::string Encode(const std::vector<Beat>& beats) {
  ChunkEncoder enc;
  std::string bytes = enc.Start(beats[0]);
  for (size_t i = 1; i < beats.size(); ++i) bytes += enc.Append(beats[i]);
  return bytes;
}

TEST(HeartbeatChunkTest, RoundTrips) {
  for (bool steady : {true, false}) {
    const std::vector<Beat> beats = Drifting(200, steady);
    absl::StatusOr<std::vector<Beat>> back = DecodeChunk(Encode(beats));
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(back->size(), beats.size());
    for (size_t i = 0; i < beats.size(); ++i)
      EXPECT_EQ((*back)[i], beats[i]) << i;
  }
}

TEST(HeartbeatChunkTest, BytesPerBeat) {
  // Steady with 1 ms jitter: seq 1 + step change 4 (+-2 ms) + offset change
  // 3 (+-0.1 ms) + threads 1 + flags 1.
  std::vector<Beat> steady;
  for (int i = 0; i < 100; ++i) {
    Beat b;
    b.seq = i + 1;
    b.observed_at_ns = i * 15000000000LL + (i % 2) * 1000000;
    b.received_at_ns = b.observed_at_ns + 1000000 + (i % 2) * 100000;
    b.threads = 4000;
    b.attach_latency_seconds = 0.1;
    steady.push_back(b);
  }
  const std::string s = Encode(steady);
  EXPECT_LE(s.size(), 40 + 99 * 10u);
  steady[50].threads = 4001;
  steady[50].attach_latency_seconds = 0.1001;
  EXPECT_EQ(Encode(steady).size(), s.size() + 16);  // latency there and back
}

// A chunk takes a beat while it is not full, the beat is observed no
// earlier than its last and less than an hour after its first.
TEST(HeartbeatChunkTest, TakesWithinTheSpanAndInOrder) {
  constexpr int64_t kT = 1700000000000000000;
  auto at = [](int64_t ns) {
    Beat b;
    b.seq = static_cast<uint64_t>(ns % 1000000 + 1);
    b.observed_at_ns = kT + ns;
    b.received_at_ns = kT + ns + 1;
    return b;
  };
  ChunkEncoder enc;
  EXPECT_FALSE(enc.Takes(at(0)));  // no chunk started
  enc.Start(at(0));
  EXPECT_TRUE(enc.Takes(at(0)));
  EXPECT_TRUE(enc.Takes(at(ChunkEncoder::kMaxSpanNs - 1)));
  EXPECT_FALSE(enc.Takes(at(ChunkEncoder::kMaxSpanNs)));
  enc.Append(at(1000));
  EXPECT_FALSE(enc.Takes(at(999)));  // before the last beat
  EXPECT_TRUE(enc.Takes(at(1000)));
  // Full at kMaxBeats, however close in time.
  ChunkEncoder full;
  full.Start(at(0));
  for (int i = 1; i < ChunkEncoder::kMaxBeats - 1; ++i) full.Append(at(i));
  EXPECT_TRUE(full.Takes(at(ChunkEncoder::kMaxBeats - 1)));
  full.Append(at(ChunkEncoder::kMaxBeats - 1));
  EXPECT_FALSE(full.Takes(at(ChunkEncoder::kMaxBeats)));
}

// The chunks of [from, to) start from an hour before `from`; chunks from
// before the bound, at or before the newest first beat among them.
TEST(HeartbeatChunkTest, ChunkStartRanges) {
  constexpr int64_t kH = ChunkEncoder::kMaxSpanNs;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  using R = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(ChunkStartRanges(10 * kH, 11 * kH, std::nullopt),
            (R{{9 * kH, 11 * kH - 1}}));
  // Unbounded chunks that start 1 ns before the bounded range: a second
  // range; at its first time, the first range reaches down instead.
  EXPECT_EQ(ChunkStartRanges(10 * kH, 11 * kH, 9 * kH - 1),
            (R{{9 * kH, 11 * kH - 1}, {kMin, 9 * kH - 1}}));
  EXPECT_EQ(ChunkStartRanges(10 * kH, 11 * kH, 9 * kH),
            (R{{kMin, 11 * kH - 1}}));
}

TEST(HeartbeatChunkTest, TruncatedIsDataLoss) {
  const std::string bytes = Encode(Drifting(10, false));
  EXPECT_EQ(DecodeChunk(bytes.substr(0, bytes.size() - 3)).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_TRUE(DecodeChunk("").ok());
}

}  // namespace
}  // namespace tracehealth::server
