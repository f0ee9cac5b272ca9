#include "common/models/vmap/vmap_explain.h"

#include <string>

#include "common/models/testing/model_hosts.h"
#include "common/models/vmap/vmap_purge.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

using testing::Seed004Host;

v1::VmapPurgePrediction Explained(const v1::HostSnapshot& s) {
  v1::VmapPurgePrediction p = PredictVmapPurge(s, {});
  ExplainVmapPurge(
      s, ResolveKernelFeatures(s.kernel(), FeatureTable::Builtin()), &p);
  return p;
}

// Per flush a + b * 256 = 8.51 ms (b anchored on 23.87 s / 2,805 flushes).
TEST(VmapExplainTest, Seed004BeforeAndAfterCombining) {
  // 2,804 areas owning a shadow page + 1 = 2,805 flushes: 23.87 s.
  v1::VmapPurgePrediction p = Explained(Seed004Host("6.10.0"));
  EXPECT_EQ(p.summary(),
            "KASAN vmalloc purge: 2805 flushes x 8.51 ms on 256 CPUs = 23.87 s "
            "per purge; soft "
            "lockup predicted.");
  ASSERT_EQ(p.basis().inputs_size(), 6);
  EXPECT_EQ(p.basis().inputs(4).name(), "vmalloc.unpurged_shadow_page_areas");
  EXPECT_EQ(p.basis().inputs(4).value(), "2804");
  EXPECT_EQ(p.basis().inputs(5).name(), "kernel.preempt_mode");
  EXPECT_EQ(p.basis().inputs(5).value(), "PREEMPT_VOLUNTARY");
  ASSERT_EQ(p.basis().feature_rows_size(), 4);
  EXPECT_EQ(
      p.basis().feature_rows(0),
      "kasan_flush_combined: since 6.13; 6.12.y from 6.12.4 -> 6.10.0: no");
  EXPECT_EQ(p.basis().feature_rows(2),
            "vmap_node_purge_lists: since 6.9 -> 6.10.0: yes");
  ASSERT_EQ(p.basis().constants_size(), 2);
  EXPECT_EQ(p.basis().constants(1).name(), "flush_b");

  // One flush per vmap node (min(256, 128)) + 1 = 129: 129 x 8.51 ms = 1.10 s.
  p = Explained(Seed004Host("6.13.0"));
  EXPECT_EQ(p.summary(),
            "KASAN vmalloc purge: 129 flushes x 8.51 ms on 256 CPUs = 1.10 s "
            "per purge (combined "
            "per vmap node); no lockup risk.");
  EXPECT_EQ(p.basis().notes(0),
            "combined flushes: one per active vmap node (128, possible CPUs "
            "clamped to 1..128; every node active is the worst case) plus "
            "one");
}

TEST(VmapExplainTest, FewAreasBoundTheNodesAndUnknownsAreSaid) {
  v1::HostSnapshot s = Seed004Host("6.13.0");
  s.mutable_vmalloc()->set_unpurged_areas(5);
  v1::VmapPurgePrediction p = Explained(s);
  EXPECT_EQ(p.flushes_per_purge(), 6u);
  EXPECT_EQ(p.basis().notes(0),
            "combined flushes: one per active vmap node (5, at most one node "
            "per pending area; "
            "every node active is the worst case) plus one");

  s = Seed004Host("6.10.0");
  s.mutable_vmalloc()->Clear();
  p = Explained(s);
  EXPECT_NE(p.summary().find("; risk unknown."), std::string::npos)
      << p.summary();
  EXPECT_EQ(p.basis().notes(0),
            "pending areas unknown: worst case at the lazy threshold with "
            "8-page areas (each "
            "owning one shadow page)");

  p = Explained(v1::HostSnapshot());
  EXPECT_EQ(p.summary(),
            "KASAN vmalloc purge: kernel config unknown, cannot tell whether "
            "it applies.");
  EXPECT_EQ(p.basis().notes(0),
            "CONFIG_KASAN_VMALLOC unknown (kernel config unreadable)");
  s.mutable_kernel()->set_config_kasan_vmalloc(false);
  p = Explained(s);
  EXPECT_EQ(
      p.summary(),
      "KASAN vmalloc purge: CONFIG_KASAN_VMALLOC is off, nothing to flush.");
  EXPECT_EQ(p.basis().inputs(0).value(), "n");
}

TEST(VmapExplainTest, InvlpgbAndCondResched) {
  v1::HostSnapshot s = Seed004Host("7.1");
  s.mutable_cpus()->set_invlpgb(true);
  v1::VmapPurgePrediction p = Explained(s);
  ASSERT_EQ(p.basis().constants_size(), 1);
  EXPECT_EQ(p.basis().constants(0).name(), "invlpgb_flush");
  EXPECT_EQ(p.basis().notes(p.basis().notes_size() - 1),
            "the purge reschedules every 32 areas: no lockup");
  // config, cpus, page size, release, then the flag the 6.17 row asks for.
  EXPECT_EQ(p.basis().inputs(4).name(), "cpus.invlpgb");
  EXPECT_EQ(p.basis().inputs(4).value(), "true");
}

}  // namespace
}  // namespace tracehealth
