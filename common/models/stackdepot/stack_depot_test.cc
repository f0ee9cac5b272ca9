#include "common/models/stackdepot/stack_depot.h"

#include "common/models/stackdepot/trie/trace_generator.h"
#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::DepotSample Sample(int64_t seconds, uint64_t pools) {
  v1::DepotSample s;
  s.mutable_at()->set_seconds(seconds);
  s.set_pools(pools);
  return s;
}

v1::HostSnapshot KasanHost(uint64_t pools) {
  return testing::KasanDepotHost(pools);
}

google::protobuf::RepeatedPtrField<v1::DepotSample> History(
    std::initializer_list<v1::DepotSample> samples) {
  google::protobuf::RepeatedPtrField<v1::DepotSample> h;
  for (const auto& s : samples) *h.Add() = s;
  return h;
}

TEST(StackDepotTest, GrowthByLeastSquares) {
  auto g = GrowthPoolsPerSecond(
      History({Sample(0, 100), Sample(100, 110), Sample(200, 120)}));
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(*g, 0.1, 1e-12);
  g = GrowthPoolsPerSecond(History(
      {Sample(0, 100), Sample(100, 130), Sample(200, 120), Sample(300, 160)}));
  EXPECT_NEAR(*g, 0.17, 1e-9);
  EXPECT_FALSE(GrowthPoolsPerSecond(History({})).has_value());
  EXPECT_FALSE(
      GrowthPoolsPerSecond(History({Sample(5, 1), Sample(5, 9)})).has_value());
}

// The growth now: samples older than an hour before the newest are left
// out (at least two stay). Boot's steep start (1,000 pools in the first
// 25 minutes), then 1 pool a minute: the whole line says 0.103 pools/s
// (6x), the newest hour exactly 1/60.
TEST(StackDepotTest, GrowthOverTheNewestHour) {
  google::protobuf::RepeatedPtrField<v1::DepotSample> h;
  for (int i = 0; i <= 5; ++i) *h.Add() = Sample(i * 300, 200 * i);
  // From 1,500 s on, one pool a minute, samples 5 minutes apart, to 6,900 s.
  for (int i = 1; i <= 18; ++i) *h.Add() = Sample(1500 + i * 300, 1000 + 5 * i);
  auto g = GrowthPoolsPerSecond(h);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(*g, 1.0 / 60, 1e-12);
  // The sample exactly an hour before the newest (3,300 s) is in; the one
  // before it (3,000 s, 1,025 pools) is not: replace it by 0 pools and the
  // slope stays.
  h.Mutable(10)->set_pools(0);
  EXPECT_EQ(h.Get(10).at().seconds(), 3000);
  EXPECT_NEAR(*GrowthPoolsPerSecond(h), 1.0 / 60, 1e-12);
  h.Mutable(11)->set_pools(0);  // 3,300 s: in the window, the slope moves
  EXPECT_GT(*GrowthPoolsPerSecond(h), 1.0 / 60 + 1e-6);
  // Two samples further apart than the window: both are used.
  EXPECT_NEAR(*GrowthPoolsPerSecond(History({Sample(0, 0), Sample(7200, 120)})),
              120.0 / 7200, 1e-15);
  // Three: the newest two.
  EXPECT_NEAR(*GrowthPoolsPerSecond(History(
                  {Sample(0, 0), Sample(7200, 120), Sample(9000, 150)})),
              30.0 / 1800, 1e-15);
}

// Samples of the boot's first 10 minutes are left out while two later ones
// remain. Uptime 1,200 s at the newest sample (1,200 s): boot at 0.
TEST(StackDepotTest, GrowthLeavesOutTheBootsFirstMinutes) {
  const auto h = History({Sample(0, 0), Sample(300, 500), Sample(600, 600),
                          Sample(900, 615), Sample(1200, 620)});
  // Without uptime, all five (within the hour): means 600 s and 467 pools,
  // slope 406,500 / 900,000.
  EXPECT_NEAR(*GrowthPoolsPerSecond(h), 0.451666666666667, 1e-12);
  // From 600 s (exactly settled: in): 600, 615, 620 pools at 600, 900 and
  // 1,200 s: (-300 x -11.667 + 300 x 8.333) / 180,000 = 1/30.
  EXPECT_NEAR(*GrowthPoolsPerSecond(h, 1200.0), 1.0 / 30, 1e-12);
  // Booted 1 s later: 600 s is inside the first 10 minutes; 900 and 1,200
  // s remain: 5 pools in 300 s.
  EXPECT_NEAR(*GrowthPoolsPerSecond(h, 1199.0), 1.0 / 60, 1e-12);
  // Booted at 1,000 s: every sample but the newest in the first 10
  // minutes; the newest two stay.
  EXPECT_NEAR(*GrowthPoolsPerSecond(h, 200.0), 1.0 / 60, 1e-12);
  // Booted 3 hours ago: nothing left out.
  EXPECT_NEAR(*GrowthPoolsPerSecond(h, 10800.0), 0.451666666666667, 1e-12);
  // The prediction reads the snapshot's uptime.
  v1::HostSnapshot s = KasanHost(4000);
  *s.mutable_depot_history() = h;
  EXPECT_NEAR(PredictStackDepot(s, {}).growth_pools_per_second(),
              0.451666666666667, 1e-12);
  s.mutable_threads()->set_uptime_seconds(1200);
  EXPECT_NEAR(PredictStackDepot(s, {}).growth_pools_per_second(), 1.0 / 30,
              1e-12);
}

// lib/stackdepot.c with 64 KiB pages: pools of 4 pages = 256 KiB, 13 index
// bits, limit and default 8,191; stack_depot_max_pools= above the limit is
// refused ("exceeds 8191, using default") and the default stays.
TEST(StackDepotTest, PoolsBy64KiBPages) {
  v1::HostSnapshot s = KasanHost(4000);
  s.mutable_kernel()->set_page_size(65536);
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  EXPECT_EQ(p.pool_bytes(), 262144u);
  EXPECT_EQ(p.max_pools(), 8191u);
  EXPECT_DOUBLE_EQ(p.budget_ratio(), 4000.0 / 8191);
  s.mutable_kernel()->set_cmdline("ro stack_depot_max_pools=8192");
  p = PredictStackDepot(s, {});
  EXPECT_EQ(p.max_pools(), 8191u);  // refused: one over the limit
  s.mutable_kernel()->set_cmdline("ro stack_depot_max_pools=8191");
  EXPECT_EQ(PredictStackDepot(s, {}).max_pools(), 8191u);
  s.mutable_kernel()->set_cmdline("ro stack_depot_max_pools=0x1000");
  EXPECT_EQ(PredictStackDepot(s, {}).max_pools(), 4096u);  // hex, accepted
  // 4 KiB pages: 16 KiB pools, default 8,192, 16384 accepted (limit
  // 131,071), 1023 refused (below 1024).
  s.mutable_kernel()->set_page_size(4096);
  s.mutable_kernel()->clear_cmdline();
  p = PredictStackDepot(s, {});
  EXPECT_EQ(p.pool_bytes(), 16384u);
  EXPECT_EQ(p.max_pools(), 8192u);
  s.mutable_kernel()->set_cmdline("stack_depot_max_pools=16384");
  EXPECT_EQ(PredictStackDepot(s, {}).max_pools(), 16384u);
  s.mutable_kernel()->set_cmdline("stack_depot_max_pools=1023");
  EXPECT_EQ(PredictStackDepot(s, {}).max_pools(), 8192u);
}

TEST(StackDepotTest, Seed003FullServerIsAStall) {
  // The trie-off x86-64 server of seed 003: 8,192 of 8,192 pools.
  v1::HostSnapshot s = KasanHost(8192);
  s.mutable_stackdepot()->set_persistent_count(498000);
  s.mutable_stackdepot()->set_persistent_bytes(498000ull * 268);
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  EXPECT_TRUE(p.applies());
  EXPECT_EQ(p.max_pools(), 8192u);
  EXPECT_DOUBLE_EQ(p.budget_ratio(), 1.0);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  EXPECT_EQ(p.hash_record_bytes(), 544u);  // 64 frames
  ASSERT_EQ(p.checks_size(), 1);
  EXPECT_EQ(p.checks(0).kind(), v1::ThresholdCheck::KIND_POOL_BUDGET);
  EXPECT_EQ(p.trie().source(), v1::TrieEstimate::SOURCE_GENERATED);
  EXPECT_GE(p.trie().ratio(), 0.5);
  EXPECT_LE(p.trie().ratio(), 0.7);
  // At the field figure of ~268 B per hash record, the trie would need
  // 146-174 B per record (seed 003's trie-on servers).
  const double trie_per_record =
      static_cast<double>(p.trie().trie_bytes()) / 498000;
  EXPECT_GE(trie_per_record, 146);
  EXPECT_LE(trie_per_record, 174);
  EXPECT_TRUE(
      p.summary().empty());  // numbers only: stack_depot_explain writes it
}

TEST(StackDepotTest, WarningAndNone) {
  EXPECT_EQ(PredictStackDepot(KasanHost(2630), {}).risk(),
            v1::RISK_NONE);  // 32%
  EXPECT_EQ(PredictStackDepot(KasanHost(7000), {}).risk(), v1::RISK_WARNING);
  // Budget raised on the command line.
  v1::HostSnapshot s = KasanHost(8192);
  s.mutable_kernel()->set_cmdline("stack_depot_max_pools=32768");
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  EXPECT_EQ(p.max_pools(), 32768u);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

// Both sides of each pool-risk boundary: a budget above 0.8 is a warning
// (0.8 itself is not), a full budget a stall.
TEST(StackDepotTest, BudgetRatioBoundaries) {
  v1::HostSnapshot s = KasanHost(8000);
  s.mutable_kernel()->set_cmdline("stack_depot_max_pools=10000");
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  ASSERT_EQ(p.max_pools(), 10000u);
  EXPECT_DOUBLE_EQ(p.budget_ratio(), 8000.0 / 10000);  // 0.8
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  s.mutable_stackdepot()->set_pools(8001);  // 0.8001
  EXPECT_EQ(PredictStackDepot(s, {}).risk(), v1::RISK_WARNING);
  s.mutable_stackdepot()->set_pools(9999);  // 0.9999
  EXPECT_EQ(PredictStackDepot(s, {}).risk(), v1::RISK_WARNING);
  s.mutable_stackdepot()->set_pools(10000);  // 1.0
  EXPECT_EQ(PredictStackDepot(s, {}).risk(), v1::RISK_STALL);
}

// Exhaustion within an hour (3,600 s) is a stall, within a week
// (7 * 24 * 3600 = 604,800 s) a warning; each bound is included.
TEST(StackDepotTest, ExhaustionTimeBoundaries) {
  // Two samples 100 s apart, 100 pools more: least squares gives exactly
  // 1 pool/s. 8,192 - 4,592 = 3,600 pools left: 3,600 s.
  v1::HostSnapshot s = KasanHost(4592);
  *s.add_depot_history() = Sample(0, 0);
  *s.add_depot_history() = Sample(100, 100);
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  EXPECT_DOUBLE_EQ(p.growth_pools_per_second(), 1.0);
  EXPECT_DOUBLE_EQ(p.seconds_to_exhaustion(), 3600);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  s.mutable_stackdepot()->set_pools(4591);  // 3,601 s
  p = PredictStackDepot(s, {});
  EXPECT_DOUBLE_EQ(p.seconds_to_exhaustion(), 3601);
  EXPECT_EQ(p.risk(), v1::RISK_WARNING);

  // One pool per 64 s (samples 64 s apart, one pool more: exactly 1/64).
  // With 16,384 pools, 16,384 - 6,934 = 9,450 left: 9,450 * 64 = 604,800 s.
  s.clear_depot_history();
  *s.add_depot_history() = Sample(0, 0);
  *s.add_depot_history() = Sample(64, 1);
  s.mutable_kernel()->set_cmdline("stack_depot_max_pools=16384");
  s.mutable_stackdepot()->set_pools(6934);
  p = PredictStackDepot(s, {});
  EXPECT_DOUBLE_EQ(p.growth_pools_per_second(), 1.0 / 64);
  EXPECT_DOUBLE_EQ(p.seconds_to_exhaustion(), 604800);
  EXPECT_EQ(p.risk(), v1::RISK_WARNING);    // budget 6,934 / 16,384 = 0.42
  s.mutable_stackdepot()->set_pools(6933);  // 9,451 * 64 = 604,864 s
  p = PredictStackDepot(s, {});
  EXPECT_DOUBLE_EQ(p.seconds_to_exhaustion(), 604864);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  // Full: 0 s to exhaustion while growing.
  s.mutable_stackdepot()->set_pools(16384);
  EXPECT_DOUBLE_EQ(PredictStackDepot(s, {}).seconds_to_exhaustion(), 0);
}

TEST(StackDepotTest, TimeToExhaustion) {
  v1::HostSnapshot s = KasanHost(4000);
  // 10 pools per hour.
  for (int i = 0; i <= 10; ++i)
    *s.add_depot_history() = Sample(i * 360, 3990 + i);
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  ASSERT_TRUE(p.has_growth_pools_per_second());
  EXPECT_NEAR(p.growth_pools_per_second(), 1.0 / 360, 1e-9);
  ASSERT_TRUE(p.has_seconds_to_exhaustion());
  EXPECT_NEAR(p.seconds_to_exhaustion(), (8192 - 4000) * 360.0, 1e-3);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);  // 17 days away
  // 100 pools per minute: full in under an hour.
  s.clear_depot_history();
  for (int i = 0; i <= 10; ++i)
    *s.add_depot_history() = Sample(i * 60, 3000 + 100 * i);
  p = PredictStackDepot(s, {});
  EXPECT_LT(p.seconds_to_exhaustion(), 3600);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  // Not growing: no exhaustion time.
  s.clear_depot_history();
  for (int i = 0; i <= 3; ++i) *s.add_depot_history() = Sample(i * 60, 4000);
  p = PredictStackDepot(s, {});
  EXPECT_FALSE(p.has_seconds_to_exhaustion());
}

// The trie would hold the persistent records; page_owner's show_stacks
// records are refcounted (STACK_DEPOT_FLAG_GET) and stay in the hash. So
// the host's traces give the ratio, applied to the persistent bytes.
TEST(StackDepotTest, HostTracesGiveTheRatioForThePersistentRecords) {
  v1::HostSnapshot s = KasanHost(100);
  s.mutable_trie()->set_traces(1000);
  s.mutable_trie()->set_hash_bytes(288000);
  s.mutable_trie()->set_trie_bytes(144000);
  s.mutable_trie()->set_trie_pools(9);
  s.mutable_stackdepot()->set_persistent_count(5000);
  s.mutable_stackdepot()->set_persistent_bytes(1000000);
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  EXPECT_EQ(p.trie().source(), v1::TrieEstimate::SOURCE_HOST_TRACES);
  EXPECT_DOUBLE_EQ(p.trie().ratio(), 144000.0 / 288000);
  EXPECT_EQ(p.trie().records(), 5000u);
  EXPECT_EQ(p.trie().hash_bytes(), 1000000u);
  EXPECT_EQ(p.trie().trie_bytes(), 500000u);  // 1,000,000 x 0.5
  // ceil(1,000,000 / 16,384) = 62 and ceil(500,000 / 16,384) = 31 pools.
  EXPECT_EQ(p.trie().hash_pools(), 62u);
  EXPECT_EQ(p.trie().trie_pools(), 31u);
  // Without persistent bytes the host's traces are no saving: the
  // generated workload alone.
  s.mutable_stackdepot()->clear_persistent_bytes();
  p = PredictStackDepot(s, {});
  EXPECT_EQ(p.trie().source(), v1::TrieEstimate::SOURCE_GENERATED);
  EXPECT_EQ(p.trie().records(), 32768u);
}

TEST(StackDepotTest, NotApplicableAndUnknown) {
  v1::HostSnapshot s;
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  EXPECT_FALSE(p.applies());
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  s.mutable_kernel()->set_config_kasan(false);
  s.mutable_kernel()->set_config_page_owner(false);
  s.mutable_kernel()->set_config_stackdepot(false);
  p = PredictStackDepot(s, {});
  EXPECT_FALSE(p.applies());
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  // KASAN kernel without the debugfs stats (before 6.8).
  s.mutable_kernel()->set_config_kasan(true);
  p = PredictStackDepot(s, {});
  EXPECT_TRUE(p.applies());
  EXPECT_FALSE(p.has_pools_used());
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  // Assumed: max frames, page size and max pools; unknown: the pool count.
  // 1 - 0.1 - 0.1 - 0.1 - 0.3.
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 1.0 - 0.1 - 0.1 - 0.1 - 0.3);
}

// A kernel without CONFIG_STACKDEPOT_MAX_FRAMES (before 6.8) assumes
// nothing about it: the same host loses 0.1 less confidence.
TEST(StackDepotTest, MaxFramesNotApplicableLowersNoConfidence) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.1.0");
  s.mutable_kernel()->set_config_stackdepot(true);
  s.mutable_kernel()->set_page_size(4096);  // measured: no deduction
  // Assumed: max frames and max pools; unknown: pools. 1 - 0.1 - 0.1 - 0.3.
  EXPECT_DOUBLE_EQ(PredictStackDepot(s, {}).basis().confidence(),
                   1.0 - 0.1 - 0.1 - 0.3);
  v1::NotApplicableInput* n = s.add_not_applicable();
  n->set_input("kernel.config_stackdepot_max_frames");
  n->set_reason("CONFIG_STACKDEPOT_MAX_FRAMES does not exist on this release");
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  // Assumed: max pools; unknown: pools. 1 - 0.1 - 0.3.
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 1.0 - 0.1 - 0.3);
  // The record size stays the 64-frame one: ALIGN(32 + 8 * 64, 16) = 544.
  EXPECT_EQ(p.hash_record_bytes(), 544u);
  // Another input's entry changes nothing.
  n->set_input("trie");
  EXPECT_DOUBLE_EQ(PredictStackDepot(s, {}).basis().confidence(),
                   1.0 - 0.1 - 0.1 - 0.3);
  // A measured value wins over an entry for it.
  n->set_input("kernel.config_stackdepot_max_frames");
  s.mutable_kernel()->set_config_stackdepot_max_frames(32);
  EXPECT_DOUBLE_EQ(PredictStackDepot(s, {}).basis().confidence(),
                   1.0 - 0.1 - 0.3);
}

TEST(StackDepotTest, MeasureShowStacks) {
  // Two stacks sharing two frames, in stack_print()'s format.
  auto m = MeasureShowStacks(
      " post_alloc_hook+0x177/0x1a0\n get_page_from_freelist+0x6d6/0x2ab0\n"
      " alloc_a+0x10/0x20\nnr_base_pages: 12\n\n"
      " post_alloc_hook+0x177/0x1a0\n get_page_from_freelist+0x6d6/0x2ab0\n"
      " alloc_b+0x10/0x20\n alloc_c+0x1/0x9\nnr_base_pages: 4\n\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->traces(), 2u);
  EXPECT_EQ(m->frames(), 7u);
  // Hash records: ALIGN(32 + 8 * 3, 16) = ALIGN(56, 16) = 64 and
  // ALIGN(32 + 8 * 4, 16) = 64.
  EXPECT_EQ(m->hash_bytes(), 64u + 64u);
  EXPECT_GT(m->trie_bytes(), 0u);
  EXPECT_EQ(m->trie_pools(), 1u);
  EXPECT_EQ(m->insert_failures(), 0u);
  EXPECT_EQ(MeasureShowStacks(" a+0x1/0x2\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StackDepotTest, CompareOnSeedWorkloadAndFlatShape) {
  const TrieComparison& g = GeneratedWorkloadEstimate();
  EXPECT_EQ(g.records, 32768u);
  EXPECT_EQ(g.hash_bytes, 32768u * 288);
  EXPECT_EQ(g.insert_failures, 0u);
  EXPECT_GE(g.ratio, 0.5);
  EXPECT_LE(g.ratio, 0.7);
  EXPECT_LT(g.trie_pools, g.hash_pools);
  // Duplicates are one record in both backends.
  WorkloadOptions small;
  small.stacks = 128;
  auto traces = GenerateSeedWorkload(small);
  auto doubled = traces;
  doubled.insert(doubled.end(), traces.begin(), traces.end());
  EXPECT_EQ(CompareTrieWithHash(doubled).hash_bytes,
            CompareTrieWithHash(traces).hash_bytes);
}

}  // namespace
}  // namespace tracehealth
