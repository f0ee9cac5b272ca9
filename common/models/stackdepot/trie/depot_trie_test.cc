#include "common/models/stackdepot/trie/depot_trie.h"

#include <set>
#include <vector>

#include "common/models/stackdepot/trie/trace_generator.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

constexpr uint64_t kText = 0xffffffff81000000ull;

std::vector<uint64_t> Trace(std::initializer_list<uint64_t> offsets) {
  std::vector<uint64_t> t;
  for (uint64_t o : offsets) t.push_back(kText + o);
  return t;
}

TEST(DepotTrieTest, InsertLookupFetchRoundTrip) {
  DepotTrie trie;
  auto a = Trace({1, 2, 3, 4});
  auto id = trie.Insert(a);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, 1u);
  EXPECT_EQ(*trie.Insert(a), 1u);  // same trace, same ID
  EXPECT_EQ(trie.Lookup(a), 1u);
  EXPECT_EQ(*trie.Fetch(1), a);
  EXPECT_FALSE(trie.Lookup(Trace({1, 2, 3})).has_value());
  EXPECT_FALSE(trie.Lookup(Trace({1, 2, 3, 4, 5})).has_value());
  EXPECT_EQ(trie.Fetch(2).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(trie.Fetch(0).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(trie.Insert({}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Traces of up to max_frames frames are taken, one more is refused.
TEST(DepotTrieTest, MaxFramesBoundary) {
  DepotTrieOptions options;
  options.max_frames = 8;
  DepotTrie trie(options);
  EXPECT_TRUE(trie.Insert(Trace({1, 2, 3, 4, 5, 6, 7, 8})).ok());
  absl::StatusOr<DepotTrie::StackId> id =
      trie.Insert(Trace({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(id.status().message(), "stack trace of 9 frames exceeds 8");
  // The default: 1,024.
  DepotTrie defaults;
  std::vector<uint64_t> longest(1024, kText + 1);
  EXPECT_TRUE(defaults.Insert(longest).ok());
  longest.push_back(kText + 2);
  EXPECT_EQ(defaults.Insert(longest).status().message(),
            "stack trace of 1025 frames exceeds 1024");
}

TEST(DepotTrieTest, OldIdsSurviveSplits) {
  DepotTrie trie;
  auto a = Trace({1, 2, 3, 4, 5, 6});
  auto b = Trace({1, 2, 3, 9, 9});        // splits a's node after 3 frames
  auto c = Trace({1, 2});                 // ends inside the shared prefix
  auto d = Trace({1, 2, 3});              // ends exactly at a node boundary
  auto e = Trace({1, 2, 3, 4, 5, 6, 7});  // extends a leaf
  auto f = Trace({1, 7});
  const auto ia = *trie.Insert(a);
  EXPECT_EQ(trie.stats().nodes, 1u);
  const auto ib = *trie.Insert(b);
  EXPECT_EQ(trie.stats().nodes, 3u);
  const auto ic = *trie.Insert(c);
  const auto id = *trie.Insert(d);
  const auto ie = *trie.Insert(e);
  const auto iff = *trie.Insert(f);
  EXPECT_EQ(std::set<uint32_t>({ia, ib, ic, id, ie, iff}).size(), 6u);
  // Dense IDs.
  EXPECT_EQ(ia, 1u);
  EXPECT_EQ(iff, 6u);
  // Every old ID still fetches its exact trace after each topology change.
  EXPECT_EQ(*trie.Fetch(ia), a);
  EXPECT_EQ(*trie.Fetch(ib), b);
  EXPECT_EQ(*trie.Fetch(ic), c);
  EXPECT_EQ(*trie.Fetch(id), d);
  EXPECT_EQ(*trie.Fetch(ie), e);
  EXPECT_EQ(*trie.Fetch(iff), f);
  EXPECT_EQ(trie.Lookup(d), id);
  EXPECT_EQ(trie.Lookup(a), ia);
  EXPECT_EQ(trie.stats().records, 6u);
}

TEST(DepotTrieTest, ChildLimitFailsAndChangesNothing) {
  DepotTrieOptions options;
  DepotTrie trie(options);
  for (uint64_t i = 0; i < 1024; ++i) {
    ASSERT_TRUE(trie.Insert(Trace({1, 100 + i})).ok()) << i;
  }
  const DepotTrieStats before = trie.stats();
  EXPECT_EQ(before.max_children_seen, 1024u);
  auto extra = Trace({1, 5000});
  auto status = trie.Insert(extra);
  EXPECT_EQ(status.status().code(), absl::StatusCode::kResourceExhausted);
  const DepotTrieStats after = trie.stats();
  EXPECT_EQ(after.records, before.records);
  EXPECT_EQ(after.nodes, before.nodes);
  EXPECT_EQ(after.live_bytes, before.live_bytes);
  EXPECT_EQ(after.pools, before.pools);
  EXPECT_EQ(after.insert_failures, 1u);
  EXPECT_FALSE(trie.Lookup(extra).has_value());
  // Existing records stay valid; a trace below an existing child still fits.
  for (uint64_t i = 0; i < 1024; i += 97) {
    EXPECT_EQ(*trie.Fetch(static_cast<uint32_t>(i + 1)), Trace({1, 100 + i}));
  }
  EXPECT_TRUE(trie.Insert(Trace({1, 100, 7})).ok());
  // A full child array is exactly one 16 KiB pool.
  EXPECT_EQ(1024 * DepotTrie::kChildSlotBytes, kDepotPoolBytes);
}

TEST(DepotTrieTest, CompactAndFullWidthFrames) {
  DepotTrie trie;
  const uint64_t module_addr = 0xffffffffa0001234ull;   // compressible
  const uint64_t vmalloc_addr = 0xffffc90000123456ull;  // not (BPF JIT, ...)
  auto compact = std::vector<uint64_t>{kText + 1, module_addr, kText + 2};
  auto mixed =
      std::vector<uint64_t>{kText + 1, module_addr, vmalloc_addr, kText + 3};
  EXPECT_TRUE(trie.Compressible(kText));
  EXPECT_FALSE(trie.Compressible(vmalloc_addr));
  EXPECT_FALSE(trie.Compressible(0x00000000ffffffffull));
  const auto ic = *trie.Insert(compact);
  DepotTrieStats s = trie.stats();
  EXPECT_EQ(s.compact_frames, 3u);
  EXPECT_EQ(s.full_frames, 0u);
  EXPECT_EQ(s.live_bytes,
            Align16(48 + 3 * 4) + 16 /*root array*/ + DepotTrie::kIdChunkBytes);
  const auto im = *trie.Insert(mixed);
  s = trie.stats();
  // Split after 2 shared frames: prefix compact, old tail compact, new tail
  // (vmalloc_addr, kText+3) full-width.
  EXPECT_EQ(s.compact_frames, 3u);
  EXPECT_EQ(s.full_frames, 2u);
  EXPECT_EQ(*trie.Fetch(ic), compact);
  EXPECT_EQ(*trie.Fetch(im), mixed);
  // A full-width run split so that its tail becomes compact.
  auto full_first = std::vector<uint64_t>{vmalloc_addr, kText + 5, kText + 6};
  auto diverge = std::vector<uint64_t>{vmalloc_addr, kText + 9};
  const auto ifull = *trie.Insert(full_first);
  const auto idiv = *trie.Insert(diverge);
  EXPECT_EQ(*trie.Fetch(ifull), full_first);
  EXPECT_EQ(*trie.Fetch(idiv), diverge);
  s = trie.stats();
  EXPECT_EQ(s.full_frames, 3u);  // vmalloc_addr once + the earlier two
}

TEST(DepotTrieTest, Arm64OffsetsFromText) {
  DepotTrieOptions options;
  options.arch = FrameArch::kArm64;
  options.arm64_text = 0xffff800080000000ull;
  DepotTrie trie(options);
  EXPECT_TRUE(trie.Compressible(options.arm64_text + 0x7fffffff));
  EXPECT_TRUE(trie.Compressible(options.arm64_text - 0x80000000ull));
  EXPECT_FALSE(trie.Compressible(options.arm64_text + 0x80000000ull));
  auto t = std::vector<uint64_t>{options.arm64_text - 16,
                                 options.arm64_text + 0x1000,
                                 options.arm64_text + 0x90000000ull};
  const auto id = *trie.Insert(t);
  EXPECT_EQ(*trie.Fetch(id), t);
  EXPECT_EQ(trie.stats().full_frames,
            3u);  // one frame forces the run full-width
}

TEST(DepotTrieTest, PoolBudgetFailureChangesNothing) {
  DepotTrieOptions options;
  options.max_pools = 2;
  DepotTrie trie(options);
  std::vector<uint64_t> t(32);
  int ok = 0;
  absl::Status last;
  for (uint64_t i = 0; i < 1000; ++i) {
    for (uint64_t f = 0; f < 32; ++f) t[f] = kText + i * 1000 + f;
    auto id = trie.Insert(t);
    if (!id.ok()) {
      last = id.status();
      break;
    }
    ++ok;
  }
  EXPECT_EQ(last.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_GT(ok, 50);
  EXPECT_EQ(trie.stats().pools, 2u);
  EXPECT_EQ(trie.stats().records, static_cast<uint64_t>(ok));
  EXPECT_EQ(*trie.Fetch(1), [] {
    std::vector<uint64_t> first(32);
    for (uint64_t f = 0; f < 32; ++f) first[f] = kText + f;
    return first;
  }());
}

TEST(DepotTrieTest, SeedWorkloadUsesHalfToSeventyPercentOfHash) {
  const auto traces = GenerateSeedWorkload();
  DepotTrie trie;
  PoolAccounting hash;
  for (const auto& t : traces) {
    auto id = trie.Insert(t);
    ASSERT_TRUE(id.ok()) << id.status();
    hash.Allocate(HashRecordBytes(t.size()));
  }
  const DepotTrieStats s = trie.stats();
  EXPECT_EQ(s.records, 32768u);
  EXPECT_EQ(s.full_frames, 0u);
  const double ratio = static_cast<double>(s.live_bytes) / hash.live_bytes();
  std::printf(
      "hash %llu B (%.1f B/record, %llu pools), trie %llu B (%.1f B/record, "
      "%llu pools, %llu nodes), ratio %.3f\n",
      static_cast<unsigned long long>(hash.live_bytes()),
      hash.live_bytes() / 32768.0,
      static_cast<unsigned long long>(hash.pools()),
      static_cast<unsigned long long>(s.live_bytes), s.live_bytes / 32768.0,
      static_cast<unsigned long long>(s.pools),
      static_cast<unsigned long long>(s.nodes), ratio);
  EXPECT_EQ(hash.live_bytes(), 32768u * 288);
  EXPECT_GE(ratio, 0.5);
  EXPECT_LE(ratio, 0.7);
  // Every record fetches back exactly.
  for (size_t i = 0; i < traces.size(); i += 511) {
    auto id = trie.Lookup(traces[i]);
    ASSERT_TRUE(id.has_value());
    EXPECT_EQ(*trie.Fetch(*id), traces[i]);
  }
}

}  // namespace
}  // namespace tracehealth
