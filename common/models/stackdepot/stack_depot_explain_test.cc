#include "common/models/stackdepot/stack_depot_explain.h"

#include <string>

#include "common/models/stackdepot/stack_depot.h"
#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::HostSnapshot KasanHost(uint64_t pools) {
  return testing::KasanDepotHost(pools);
}

v1::StackDepotPrediction Explained(const v1::HostSnapshot& s) {
  v1::StackDepotPrediction p = PredictStackDepot(s, {});
  ExplainStackDepot(
      s, ResolveKernelFeatures(s.kernel(), FeatureTable::Builtin()), &p);
  return p;
}

TEST(StackDepotExplainTest, FullDepotSaysWhatToDo) {
  // 8,192 of 8,192 pools: 100 %; the trie would need the generated ratio of
  // the hash bytes (56.5 % rounds to 57 %).
  v1::StackDepotPrediction p = Explained(KasanHost(8192));
  EXPECT_EQ(
      p.summary(),
      "Stack depot: 8192 of 8192 pools (100%); the trie backend would need 57% "
      "of the hash "
      "bytes; new traces lose their handle: raise stack_depot_max_pools.");
  ASSERT_EQ(p.basis().inputs_size(), 6);
  EXPECT_EQ(p.basis().inputs(2).name(), "kernel.config_stackdepot_max_frames");
  EXPECT_EQ(p.basis().inputs(2).value(), "64");
  EXPECT_EQ(p.basis().inputs(2).source(), v1::INPUT_SOURCE_DEFAULT);
  EXPECT_EQ(p.basis().inputs(3).name(), "kernel.page_size");
  EXPECT_EQ(p.basis().inputs(3).value(), "4096");
  EXPECT_EQ(p.basis().inputs(3).source(), v1::INPUT_SOURCE_DEFAULT);
  EXPECT_EQ(p.basis().inputs(4).name(), "stackdepot.max_pools");
  EXPECT_EQ(p.basis().inputs(5).value(), "8192");
  // Pools of 4 pages: 16,384 B; limit 2^17 - 1.
  ASSERT_GE(p.basis().constants_size(), 2);
  EXPECT_EQ(p.basis().constants(0).name(), "pool_bytes");
  EXPECT_DOUBLE_EQ(p.basis().constants(0).value(), 16384);
  EXPECT_EQ(p.basis().constants(1).name(), "pool_limit");
  EXPECT_DOUBLE_EQ(p.basis().constants(1).value(), 131071);
  EXPECT_EQ(p.basis().notes(0),
            "trie figures are the generated workload's own (persistent bytes "
            "unknown)");
}

TEST(StackDepotExplainTest, MaxFramesNotApplicableSaysWhy) {
  v1::HostSnapshot s = KasanHost(100);
  s.mutable_kernel()->set_release("6.1.0");
  v1::NotApplicableInput* n = s.add_not_applicable();
  n->set_input("kernel.config_stackdepot_max_frames");
  n->set_reason("CONFIG_STACKDEPOT_MAX_FRAMES does not exist on this release");
  v1::StackDepotPrediction p = Explained(s);
  ASSERT_GE(p.basis().inputs_size(), 3);
  EXPECT_EQ(p.basis().inputs(2).name(), "kernel.config_stackdepot_max_frames");
  EXPECT_EQ(p.basis().inputs(2).value(), "none");
  EXPECT_EQ(p.basis().inputs(2).source(), v1::INPUT_SOURCE_NOT_APPLICABLE);
  bool noted = false;
  for (const std::string& note : p.basis().notes()) {
    noted = noted ||
            note ==
                "CONFIG_STACKDEPOT_MAX_FRAMES does not exist on this release; "
                "records are sized to their traces, the record size shown is "
                "for 64 frames";
  }
  EXPECT_TRUE(noted) << p.basis().DebugString();
}

TEST(StackDepotExplainTest, GrowthAndCommandLine) {
  v1::HostSnapshot s = KasanHost(4000);
  // 10 pools an hour from 4,000 of 8,192: (8192 - 4000) * 360 s = 17.5 days.
  for (int i = 0; i <= 10; ++i) {
    v1::DepotSample* d = s.add_depot_history();
    d->mutable_at()->set_seconds(i * 360);
    d->set_pools(3990 + i);
  }
  v1::StackDepotPrediction p = Explained(s);
  EXPECT_EQ(p.summary(),
            "Stack depot: 4000 of 8192 pools (49%), full in 17.5 days; the "
            "trie backend would "
            "need 57% of the hash bytes.");
  EXPECT_EQ(p.basis().inputs(6).value(), "11 samples");

  // stack_depot_max_pools= is a parameter from 6.17 only.
  s = KasanHost(100);
  s.mutable_kernel()->set_cmdline("quiet stack_depot_max_pools=32768");
  s.mutable_kernel()->set_release("6.16.0");
  p = Explained(s);
  EXPECT_EQ(p.max_pools(), 8192u);
  ASSERT_EQ(p.basis().feature_rows_size(), 1);
  EXPECT_EQ(p.basis().feature_rows(0),
            "stackdepot_max_pools_param: since 6.17 -> 6.16.0: no, release "
            "inferred");
  EXPECT_EQ(p.basis().notes(0),
            "stack_depot_max_pools= ignored before 6.17 (a fixed cap)");
  // A value the kernel refuses is named.
  s.mutable_kernel()->set_release("6.17.0");
  s.mutable_kernel()->set_cmdline("stack_depot_max_pools=512");
  p = Explained(s);
  EXPECT_EQ(p.max_pools(), 8192u);
  EXPECT_EQ(p.basis().notes(0),
            "refused by the kernel (kept as it was): "
            "stack_depot_max_pools=512: below 1024");
}

TEST(StackDepotExplainTest, NotApplicableAndUnknown) {
  v1::StackDepotPrediction p = Explained(v1::HostSnapshot());
  EXPECT_EQ(p.summary(), "Stack depot: kernel config and stats unknown.");
  EXPECT_EQ(p.basis().notes(0), "kernel config and stackdepot stats unknown");
  v1::HostSnapshot s;
  s.mutable_kernel()->set_config_kasan(false);
  p = Explained(s);
  EXPECT_EQ(p.summary(),
            "Stack depot: no persistent stack records on this kernel.");
  EXPECT_EQ(p.basis().inputs(0).name(), "kernel.config_kasan");
  EXPECT_EQ(p.basis().inputs(0).value(), "n");
  s.mutable_kernel()->set_config_kasan(true);
  p = Explained(s);
  EXPECT_EQ(p.summary(),
            "Stack depot: pool use unknown; the trie backend would need 57% of "
            "the hash bytes.");
  EXPECT_EQ(p.basis().notes(0),
            "stackdepot stats unknown (debugfs stats need 6.8+)");
}

}  // namespace
}  // namespace tracehealth
