#include "common/models/vmap/vmap_purge.h"

#include <optional>

#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

using testing::Seed004Host;

TEST(VmapPurgeTest, LazyThresholdAndNodes) {
  EXPECT_EQ(Fls(256), 9);
  EXPECT_EQ(Fls(255), 8);
  EXPECT_EQ(Fls(1), 1);
  EXPECT_EQ(Fls(0), 0);
  EXPECT_EQ(LazyMaxPages(256, 4096), 9u * 8192);
  EXPECT_EQ(LazyMaxPages(8, 4096), 4u * 8192);
  EXPECT_EQ(LazyMaxPages(8, 65536), 4u * 512);
  // vmap_init_nodes(): clamp_t(num_possible_cpus(), 1, 128) under
  // BITS_PER_LONG == 64, one node otherwise.
  EXPECT_EQ(VmapNodes(256), 128u);
  EXPECT_EQ(VmapNodes(129), 128u);
  EXPECT_EQ(VmapNodes(128), 128u);
  EXPECT_EQ(VmapNodes(16), 16u);
  EXPECT_EQ(VmapNodes(0), 1u);
  EXPECT_EQ(VmapNodes(256, false), 1u);
}

// The node count follows the possible CPUs, not the online ones.
TEST(VmapPurgeTest, NodesFromPossibleCpus) {
  v1::HostSnapshot s = Seed004Host("6.13.0");
  s.mutable_cpus()->set_online(16);
  s.mutable_cpus()->set_possible(256);
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_EQ(p.vmap_nodes(), 128u);
  EXPECT_EQ(p.flushes_per_purge(), 129u);
  s.mutable_cpus()->set_possible(16);
  EXPECT_EQ(PredictVmapPurge(s, {}).flushes_per_purge(), 17u);
  // A 32-bit kernel has one node: two flushes.
  s.mutable_kernel()->set_arch("i686");
  EXPECT_EQ(PredictVmapPurge(s, {}).flushes_per_purge(), 2u);
}

// arm64 flush_tlb_kernel_range(): dsb(ishst); __tlbi(vaale1is, ...) per
// page; dsb(ish): a broadcast TLBI, no IPIs, whatever the CPU count.
TEST(VmapPurgeTest, Arm64FlushesByBroadcastTlbi) {
  v1::HostSnapshot s = Seed004Host("6.10.0");
  s.mutable_kernel()->set_arch("aarch64");
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_TRUE(p.broadcast_tlbi());
  EXPECT_DOUBLE_EQ(p.per_flush_seconds(), VmapConstants().tlbi_flush);
  // 2,805 x 20 us = 56.1 ms: no lockup.
  EXPECT_NEAR(p.purge_seconds(), 2805 * 20e-6, 1e-12);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

// Before 282631cb2447 (6.9) the purge loop ran cond_resched_lock() between
// areas once vmap_lazy_nr was under 2 x lazy_max_pages().
TEST(VmapPurgeTest, PurgeBefore69Yields) {
  v1::HostSnapshot s = Seed004Host("6.8.12");
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_EQ(p.flushes_per_purge(), 2805u);
  EXPECT_TRUE(p.yields());
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  // A backlog of 4 x the threshold (73,728 pages on 256 CPUs): the first
  // (4 - 2) / 4 of the purge does not yield: 23.87 s / 2 = 11.9 s.
  s.mutable_vmalloc()->set_unpurged_bytes(4ull * 73728 * 4096);
  p = PredictVmapPurge(s, {});
  EXPECT_FALSE(p.yields());
  ASSERT_GT(p.checks_size(), 0);
  // Per flush a + b * 256 = 23.87 s / 2,805 (b is anchored on seed 004), so
  // the purge is 2,805 * 23.87 / 2,805 = 23.87 s and (4 - 2) / 4 of it
  // does not yield.
  EXPECT_NEAR(p.purge_seconds(), 23.87, 1e-9);
  EXPECT_NEAR(p.checks(0).predicted(), 23.87 * (4 - 2) / 4, 1e-9);
  EXPECT_EQ(p.risk(), v1::RISK_WARNING);
  // 6.9: no resched point in the purge.
  s.mutable_kernel()->set_release("6.9.0");
  s.mutable_vmalloc()->clear_unpurged_bytes();
  p = PredictVmapPurge(s, {});
  EXPECT_FALSE(p.yields());
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
}

TEST(VmapPurgeTest, Seed004BeforeCombining) {
  v1::VmapPurgePrediction p = PredictVmapPurge(Seed004Host("6.10.0"), {});
  EXPECT_TRUE(p.applies());
  EXPECT_FALSE(p.combined_flushes());
  EXPECT_EQ(p.flushes_per_purge(), 2805u);
  EXPECT_NEAR(p.purge_seconds() / 23.9, 1.0, 0.15);
  EXPECT_NEAR(p.per_flush_seconds() * 1e3, 8.5, 0.1);
  EXPECT_EQ(p.lazy_threshold_pages(), 73728u);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  EXPECT_TRUE(p.summary().empty());  // numbers only: vmap_explain writes it
}

// Before the combining change, without the count of pending areas that
// own a whole shadow page: every pending area is counted, plus the final
// flush (an upper bound: areas that share a shadow page flush once).
TEST(VmapPurgeTest, BeforeCombiningEveryPendingAreaPlusOne) {
  v1::HostSnapshot s = Seed004Host("6.10.0");
  s.mutable_vmalloc()->clear_unpurged_shadow_page_areas();
  s.mutable_vmalloc()->set_unpurged_areas(3000);
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_FALSE(p.combined_flushes());
  EXPECT_EQ(p.flushes_per_purge(), 3001u);
  s.mutable_vmalloc()->set_unpurged_areas(0);
  EXPECT_EQ(PredictVmapPurge(s, {}).flushes_per_purge(), 1u);
  // With the shadow-page count it wins over the area count: 2,804 + 1.
  s = Seed004Host("6.10.0");
  s.mutable_vmalloc()->set_unpurged_areas(3000);
  EXPECT_EQ(PredictVmapPurge(s, {}).flushes_per_purge(), 2805u);
}

TEST(VmapPurgeTest, Seed004WorstCaseAfterCombining) {
  // After 9e9e085effe9: one flush per active vmap node (128 on 256 CPUs,
  // all active in the worst case) plus the final one: 129 x 8.5 ms.
  v1::VmapPurgePrediction p = PredictVmapPurge(Seed004Host("6.13.0"), {});
  EXPECT_TRUE(p.combined_flushes());
  EXPECT_EQ(p.flushes_per_purge(), 129u);
  EXPECT_NEAR(p.purge_seconds() / 1.07, 1.0, 0.15);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

// Every way the flush count is worked out, each exact on Seed004Host (256
// online CPUs, possible unset: 256, so 128 vmap nodes; 2,804 pending areas
// owning a whole shadow page; 3,100 pending areas; 73,728-page threshold).
// Dropping any path's "+ 1", the floor of one node, or the cap of nodes by
// pending areas fails here.
TEST(VmapPurgeTest, EveryFlushCountPathExactly) {
  struct Case {
    const char* path;
    const char* release;
    std::optional<uint64_t> shadow_page_areas;
    std::optional<uint64_t> areas;
    uint64_t flushes;
  };
  const Case cases[] = {
      // Combined (6.13): one per vmap node + 1; nodes = clamp(256, 1, 128).
      {"nodes", "6.13.0", 2804, 3100, 128 + 1},
      {"nodes, no area count", "6.13.0", std::nullopt, std::nullopt, 128 + 1},
      // Fewer pending areas than nodes: at most one node per area, + 1;
      // both sides of 128.
      {"nodes = areas, 127", "6.13.0", std::nullopt, 127, 127 + 1},
      {"nodes, 128 areas", "6.13.0", std::nullopt, 128, 128 + 1},
      {"nodes = areas, 5", "6.13.0", 0, 5, 5 + 1},
      // No pending area: one node at least, + 1.
      {"nodes floor", "6.13.0", 0, 0, 1 + 1},
      // Before combining: one per shadow-page-owning area + 1 (wins over
      // the area count), else every pending area + 1, else the worst case
      // at the threshold: 73,728 / 8 + 1.
      {"shadow-page areas", "6.10.0", 2804, 3100, 2804 + 1},
      {"shadow-page areas, none", "6.10.0", 0, 3100, 0 + 1},
      {"areas", "6.10.0", std::nullopt, 3100, 3100 + 1},
      {"areas, one", "6.10.0", std::nullopt, 1, 1 + 1},
      {"lazy threshold", "6.10.0", std::nullopt, std::nullopt, 9216 + 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    v1::HostSnapshot s = Seed004Host(c.release);
    s.mutable_vmalloc()->clear_unpurged_shadow_page_areas();
    s.mutable_vmalloc()->clear_unpurged_areas();
    if (c.shadow_page_areas) {
      s.mutable_vmalloc()->set_unpurged_shadow_page_areas(*c.shadow_page_areas);
    }
    if (c.areas) s.mutable_vmalloc()->set_unpurged_areas(*c.areas);
    const v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
    EXPECT_EQ(p.flushes_per_purge(), c.flushes);
    // Whatever the count, the purge is that many flushes at 8.51 ms
    // (23.87 s / 2,805 on 256 CPUs).
    EXPECT_NEAR(p.purge_seconds(), c.flushes * (23.87 / 2805), 1e-9);
  }
}

// The KASAN mode (kasan_shadow.h): software tags keep one shadow byte per
// 16 bytes, so the worst case at the 73,728-page threshold is 73,728 / 16
// + 1 = 4,609 flushes (generic: 9,217); hardware tags keep no shadow, and
// the model does not apply.
TEST(VmapPurgeTest, KasanModeDecidesTheShadow) {
  v1::HostSnapshot s = Seed004Host("6.10.0");
  s.mutable_vmalloc()->Clear();
  EXPECT_EQ(PredictVmapPurge(s, {}).flushes_per_purge(), 9216u + 1);
  s.mutable_kernel()->set_config_kasan_sw_tags(true);
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_TRUE(p.applies());
  EXPECT_EQ(p.flushes_per_purge(), 4608u + 1);
  EXPECT_NEAR(p.purge_seconds(), 4609 * (23.87 / 2805), 1e-9);
  // Measured areas do not depend on the scale: the agent counted them with
  // it.
  s.mutable_vmalloc()->set_unpurged_shadow_page_areas(100);
  EXPECT_EQ(PredictVmapPurge(s, {}).flushes_per_purge(), 100u + 1);
  s.mutable_kernel()->set_config_kasan_sw_tags(false);
  s.mutable_kernel()->set_config_kasan_hw_tags(true);
  p = PredictVmapPurge(s, {});
  EXPECT_FALSE(p.applies());
  EXPECT_EQ(p.flushes_per_purge(), 0u);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

// 9e9e085effe9 reached 6.12.y in 6.12.4 ("[PATCH 6.12 000/146] 6.12.4-rc1
// review").
TEST(VmapPurgeTest, StableBackportRow) {
  EXPECT_FALSE(PredictVmapPurge(Seed004Host("6.12.3"), {}).combined_flushes());
  EXPECT_TRUE(PredictVmapPurge(Seed004Host("6.12.4"), {}).combined_flushes());
}

TEST(VmapPurgeTest, PerFlushGrowsWithCpus) {
  VmapConstants c;
  EXPECT_LT(PerFlushSeconds(8, FlushKind::kIpi, c),
            PerFlushSeconds(256, FlushKind::kIpi, c) / 20);
  EXPECT_LT(PerFlushSeconds(256, FlushKind::kInvlpgb, c),
            PerFlushSeconds(256, FlushKind::kIpi, c) / 100);
  EXPECT_DOUBLE_EQ(PerFlushSeconds(8, FlushKind::kBroadcastTlbi, c),
                   PerFlushSeconds(256, FlushKind::kBroadcastTlbi, c));
}

// 82378c6c2f43 ("x86/mm: Use INVLPGB for kernel TLB flushes") merged after
// v6.14-rc7: 6.15.
TEST(VmapPurgeTest, InvlpgbHostsOn615) {
  v1::HostSnapshot s = Seed004Host("6.15.0");
  s.mutable_cpus()->set_invlpgb(true);
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_TRUE(p.invlpgb());
  EXPECT_LT(p.purge_seconds(), 0.01);
  // Same flag on 6.14: still IPIs.
  s.mutable_kernel()->set_release("6.14.11");
  EXPECT_FALSE(PredictVmapPurge(s, {}).invlpgb());
}

TEST(VmapPurgeTest, CondReschedRemovesLockupRisk) {
  // A vendor kernel with the cond_resched change but without the combining
  // one (operator override of the feature table): thousands of flushes, yet
  // the purge reschedules, so neither watchdog can fire.
  absl::StatusOr<FeatureTable> table = FeatureTable::WithOverride(
      "features:\n"
      "  kasan_flush_combined:\n"
      "    description: not in this vendor kernel\n"
      "    since: never\n");
  ASSERT_TRUE(table.ok()) << table.status();
  ModelOptions options;
  options.features = &*table;
  // 5747435e0fd4 reached 6.18.y in 6.18.16 (the 6.18.16-rc1 review).
  v1::HostSnapshot s = Seed004Host("6.18.16");
  v1::VmapPurgePrediction p = PredictVmapPurge(s, options);
  EXPECT_FALSE(p.combined_flushes());
  EXPECT_EQ(p.flushes_per_purge(), 2805u);
  EXPECT_TRUE(p.yields());
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  for (const auto& check : p.checks()) EXPECT_FALSE(check.applies());
  // The same kernel without the cond_resched row locks up.
  s.mutable_kernel()->set_release("6.18.15");
  EXPECT_EQ(PredictVmapPurge(s, options).risk(), v1::RISK_STALL);
  // Mainline 7.0 has it.
  s.mutable_kernel()->set_release("7.0.0");
  EXPECT_TRUE(PredictVmapPurge(s, options).yields());
}

TEST(VmapPurgeTest, PreemptibleKernelNoLockup) {
  v1::HostSnapshot s = Seed004Host("6.10.0");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(PredictVmapPurge(s, {}).risk(), v1::RISK_NONE);
}

// The seed-004 purge (2,805 flushes, well over 20 s, no reschedule point
// on 6.10) under every preemption model: a lockup where nothing preempts
// it (NONE, VOLUNTARY), nothing where the kworker is preempted (FULL, LAZY,
// RT: nobody waits on it), UNKNOWN when the model is not known.
TEST(VmapPurgeTest, EveryPreemptionModel) {
  v1::HostSnapshot s = Seed004Host("6.10.0");
  const std::pair<v1::PreemptMode, v1::Risk> cases[] = {
      {v1::PREEMPT_MODE_NONE, v1::RISK_STALL},
      {v1::PREEMPT_MODE_VOLUNTARY, v1::RISK_STALL},
      {v1::PREEMPT_MODE_FULL, v1::RISK_NONE},
      {v1::PREEMPT_MODE_LAZY, v1::RISK_NONE},
      {v1::PREEMPT_MODE_RT, v1::RISK_NONE},
      {v1::PREEMPT_MODE_UNKNOWN, v1::RISK_UNKNOWN},
  };
  for (const auto& [mode, risk] : cases) {
    s.mutable_kernel()->set_preempt_mode(mode);
    v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
    EXPECT_EQ(p.risk(), risk) << v1::PreemptMode_Name(mode);
    ASSERT_GT(p.checks_size(), 0);
    const bool non_preemptible =
        mode == v1::PREEMPT_MODE_NONE || mode == v1::PREEMPT_MODE_VOLUNTARY;
    EXPECT_EQ(p.checks(0).applies(), non_preemptible)
        << v1::PreemptMode_Name(mode);
  }
}

TEST(VmapPurgeTest, NotApplicableAndUnknown) {
  v1::HostSnapshot s;
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_FALSE(p.applies());
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  s.mutable_kernel()->set_config_kasan_vmalloc(false);
  p = PredictVmapPurge(s, {});
  EXPECT_FALSE(p.applies());
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  // KASAN host with no vmallocinfo on an old kernel: worst case, unknown.
  s = Seed004Host("6.10.0");
  s.mutable_vmalloc()->Clear();
  p = PredictVmapPurge(s, {});
  EXPECT_EQ(p.flushes_per_purge(), 73728u / 8 + 1);
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  // Assumed: nothing (cpus, page size, release and preemption measured);
  // unknown: the pending areas. 1 - 0.3.
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 0.7);
}

}  // namespace
}  // namespace tracehealth
