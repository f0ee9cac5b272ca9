#include "common/models/vmap/vmap_purge.h"

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
  EXPECT_EQ(VmapNodes(256), 128u);
  EXPECT_EQ(VmapNodes(16), 16u);
  EXPECT_EQ(VmapNodes(0), 1u);
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

TEST(VmapPurgeTest, Seed004WorstCaseAfterCombining) {
  // After 9e9e085effe9: one flush per active vmap node (128 on 256 CPUs,
  // all active in the worst case) plus the final one: 129 x 8.5 ms.
  v1::VmapPurgePrediction p = PredictVmapPurge(Seed004Host("6.13.0"), {});
  EXPECT_TRUE(p.combined_flushes());
  EXPECT_EQ(p.flushes_per_purge(), 129u);
  EXPECT_NEAR(p.purge_seconds() / 1.07, 1.0, 0.15);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

TEST(VmapPurgeTest, StableBackportRow) {
  EXPECT_FALSE(PredictVmapPurge(Seed004Host("6.12.5"), {}).combined_flushes());
  EXPECT_TRUE(PredictVmapPurge(Seed004Host("6.12.6"), {}).combined_flushes());
}

TEST(VmapPurgeTest, PerFlushGrowsWithCpus) {
  VmapConstants c;
  EXPECT_LT(PerFlushSeconds(8, false, c), PerFlushSeconds(256, false, c) / 20);
  EXPECT_LT(PerFlushSeconds(256, true, c),
            PerFlushSeconds(256, false, c) / 100);
}

TEST(VmapPurgeTest, InvlpgbHostsOn617) {
  v1::HostSnapshot s = Seed004Host("6.17.0");
  s.mutable_cpus()->set_invlpgb(true);
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  EXPECT_TRUE(p.invlpgb());
  EXPECT_LT(p.purge_seconds(), 0.01);
  // Same flag on 6.16: still IPIs.
  s.mutable_kernel()->set_release("6.16.0");
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
  v1::HostSnapshot s = Seed004Host("6.18.35");
  v1::VmapPurgePrediction p = PredictVmapPurge(s, options);
  EXPECT_FALSE(p.combined_flushes());
  EXPECT_EQ(p.flushes_per_purge(), 2805u);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  for (const auto& check : p.checks()) EXPECT_FALSE(check.applies());
  // The same kernel without the cond_resched row locks up.
  s.mutable_kernel()->set_release("6.18.34");
  EXPECT_EQ(PredictVmapPurge(s, options).risk(), v1::RISK_STALL);
}

TEST(VmapPurgeTest, PreemptibleKernelNoLockup) {
  v1::HostSnapshot s = Seed004Host("6.10.0");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(PredictVmapPurge(s, {}).risk(), v1::RISK_NONE);
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
