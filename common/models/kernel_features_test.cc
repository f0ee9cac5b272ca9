#include "common/models/kernel_features.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(KernelFeaturesTest, ResolvesEveryRowOnce) {
  v1::KernelInfo k;
  k.set_release("6.18.35-cloud");
  k.set_arch("x86_64");
  KernelFeatures f = ResolveKernelFeatures(k, FeatureTable::Builtin());
  ASSERT_TRUE(f.release.has_value());
  EXPECT_TRUE(f.fprobe_on_fgraph.present);
  EXPECT_TRUE(f.fprobe_entry_only_off_fgraph.present);  // 6.18.y backport
  EXPECT_FALSE(f.retstack_batch_1024.present);
  EXPECT_TRUE(f.stackdepot_max_pools_param.present);
  EXPECT_TRUE(f.kasan_flush_combined.present);
  EXPECT_TRUE(f.kasan_purge_cond_resched.present);
  EXPECT_TRUE(f.invlpgb_kernel_flush.present);
  EXPECT_NE(f.fprobe_on_fgraph.row.find("fprobe_on_fgraph"), std::string::npos);
  // 9e9e085effe9 reached 6.12.y in 6.12.4.
  k.set_release("6.12.3");
  f = ResolveKernelFeatures(k, FeatureTable::Builtin());
  EXPECT_FALSE(f.kasan_flush_combined.present);
  EXPECT_FALSE(f.fprobe_on_fgraph.present);
  k.set_release("6.12.4");
  EXPECT_TRUE(ResolveKernelFeatures(k, FeatureTable::Builtin())
                  .kasan_flush_combined.present);
}

// A Debian release names its ABI (6.1.0-28); the rows are asked about the
// upstream stable release it is built from (6.1.119, from /proc/version).
TEST(KernelFeaturesTest, VendorReleasesAndArchitectures) {
  v1::KernelInfo k;
  k.set_release("6.12.0-7-amd64");
  k.set_version("#1 SMP PREEMPT_DYNAMIC Debian 6.12.9-1 (2025-01-11)");
  KernelFeatures f = ResolveKernelFeatures(k, FeatureTable::Builtin());
  EXPECT_EQ(f.release_kind, ReleaseKind::kVendorUnmapped);
  EXPECT_FALSE(f.kasan_flush_combined.present);  // judged as 6.12.0
  EXPECT_TRUE(f.release_unknown);
  k.set_upstream_version("6.12.9");
  f = ResolveKernelFeatures(k, FeatureTable::Builtin());
  EXPECT_EQ(f.release_kind, ReleaseKind::kVendorUpstream);
  EXPECT_EQ(f.release_source, v1::INPUT_SOURCE_DERIVED);
  EXPECT_FALSE(f.release_unknown);
  EXPECT_TRUE(f.kasan_flush_combined.present);  // 6.12.9 >= 6.12.4
  // The architecture picks the row's releases: 6.18.33 on arm64 still has
  // entry-only fprobes on fgraph, on x86-64 not.
  v1::KernelInfo arm;
  arm.set_release("6.18.33");
  arm.set_arch("aarch64");
  EXPECT_FALSE(ResolveKernelFeatures(arm, FeatureTable::Builtin())
                   .fprobe_entry_only_off_fgraph.present);
  arm.set_arch("x86_64");
  EXPECT_TRUE(ResolveKernelFeatures(arm, FeatureTable::Builtin())
                  .fprobe_entry_only_off_fgraph.present);
}

TEST(KernelFeaturesTest, UnknownAndUnparsable) {
  v1::KernelInfo k;
  KernelFeatures f = ResolveKernelFeatures(k, FeatureTable::Builtin());
  EXPECT_FALSE(f.release.has_value());
  EXPECT_EQ(f.release_note, "kernel release unknown");
  k.set_release("banana");
  f = ResolveKernelFeatures(k, FeatureTable::Builtin());
  EXPECT_FALSE(f.release.has_value());
  EXPECT_NE(f.release_note.find("unparsable"), std::string::npos);
  EXPECT_FALSE(f.kasan_flush_combined.present);
}

}  // namespace
}  // namespace tracehealth

namespace tracehealth {
namespace {

TEST(KernelFeaturesTest, MemoFollowsTheRelease) {
  v1::KernelInfo k;
  k.set_release("6.13.0");
  EXPECT_FALSE(ResolveKernelFeatures(k, FeatureTable::Builtin())
                   .fprobe_on_fgraph.present);
  k.set_release("6.14.0");
  EXPECT_TRUE(ResolveKernelFeatures(k, FeatureTable::Builtin())
                  .fprobe_on_fgraph.present);
  EXPECT_TRUE(ResolveKernelFeatures(k, FeatureTable::Builtin())
                  .fprobe_on_fgraph.present);
  k.clear_release();
  EXPECT_FALSE(
      ResolveKernelFeatures(k, FeatureTable::Builtin()).release.has_value());
  // An override table is never served from the built-in table's memo.
  k.set_release("6.14.0");
  absl::StatusOr<FeatureTable> table = FeatureTable::WithOverride(
      "features:\n  fprobe_on_fgraph:\n    description: x\n    since: never\n");
  ASSERT_TRUE(table.ok());
  EXPECT_FALSE(ResolveKernelFeatures(k, *table).fprobe_on_fgraph.present);
}

}  // namespace
}  // namespace tracehealth
