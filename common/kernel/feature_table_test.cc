#include "common/kernel/feature_table.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

KernelRelease R(const char* s) {
  absl::StatusOr<KernelRelease> r = ParseKernelRelease(s);
  EXPECT_TRUE(r.ok()) << s;
  return *r;
}

bool Has(const char* feature, const char* release) {
  return FeatureTable::Builtin().Has(feature, R(release)).present;
}

// Entry-only BPF kprobe_multi pays the fgraph walk when fprobe sits on fgraph
// and the entry-only optimisation is absent.
bool EntryOnlyKprobeMultiUsesFgraph(const char* release) {
  return Has(feature::kFprobeOnFgraph, release) &&
         !Has(feature::kFprobeEntryOnlyOffFgraph, release);
}

TEST(FeatureTableTest, BuiltinHasEveryNamedRow) {
  for (const char* name :
       {feature::kShadowStack4k, feature::kShadowStackPageKmalloc,
        feature::kRetstackBatch1024, feature::kFprobeOnFgraph,
        feature::kFprobeEntryOnlyOffFgraph, feature::kKretprobeMultiLinkType,
        feature::kStackdepotStats, feature::kPageOwnerStacks,
        feature::kStackdepotMaxPoolsParam, feature::kVmapNodePurgeLists,
        feature::kKasanFlushCombined, feature::kKasanPurgeCondResched,
        feature::kInvlpgbKernelFlush}) {
    EXPECT_TRUE(FeatureTable::Builtin().Query(name, R("6.1")).ok()) << name;
  }
}

TEST(FeatureTableTest, EntryOnlyKprobeMultiUsesFgraph) {
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.14.0-1012-aws"));
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.18.2"));
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.18.34"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.13.12"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.18.35"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.18.44-fc-v669"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.19"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("7.1.5"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.1.0-57-cloud-amd64"));
}

TEST(FeatureTableTest, BackportsApplyOnlyToTheirBranch) {
  // 6.12.y got the KASAN flush combining, 6.11 did not.
  EXPECT_TRUE(Has(feature::kKasanFlushCombined, "6.12.9"));
  EXPECT_FALSE(Has(feature::kKasanFlushCombined, "6.12.1"));
  EXPECT_FALSE(Has(feature::kKasanFlushCombined, "6.11.11"));
  EXPECT_TRUE(Has(feature::kKasanFlushCombined, "6.13"));
  // cond_resched in the purge: 7.1 and 6.18.35, not 6.19.0.
  EXPECT_TRUE(Has(feature::kKasanPurgeCondResched, "7.1.0"));
  EXPECT_TRUE(Has(feature::kKasanPurgeCondResched, "6.18.35"));
  EXPECT_FALSE(Has(feature::kKasanPurgeCondResched, "6.19.0"));
  EXPECT_FALSE(Has(feature::kKasanPurgeCondResched, "7.0.3"));
}

TEST(FeatureTableTest, NeverMeansNoRelease) {
  EXPECT_FALSE(Has(feature::kRetstackBatch1024, "7.1.5"));
  EXPECT_FALSE(Has(feature::kRetstackBatch1024, "99.0"));
}

TEST(FeatureTableTest, AnswersNameTheRowUsed) {
  FeatureAnswer a = FeatureTable::Builtin().Has(
      feature::kFprobeEntryOnlyOffFgraph, R("6.18.35"));
  EXPECT_TRUE(a.present);
  EXPECT_EQ(a.row,
            "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.35 -> "
            "6.18.35: yes (6.18.y backport)");
  EXPECT_TRUE(absl::IsNotFound(
      FeatureTable::Builtin().Query("nope", R("6.1")).status()));
}

TEST(FeatureTableTest, OperatorOverrideReplacesRows) {
  // A vendor 6.12 kernel that carries the fprobe-on-fgraph rewrite.
  absl::StatusOr<FeatureTable> t = FeatureTable::WithOverride(R"(
features:
  fprobe_on_fgraph:
    description: vendor backport
    since: "6.14"
    backports: ["6.12.40"]
)");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->Has(feature::kFprobeOnFgraph, R("6.12.44-vendor")).present);
  EXPECT_FALSE(FeatureTable::Builtin()
                   .Has(feature::kFprobeOnFgraph, R("6.12.44"))
                   .present);
  // Other rows are kept.
  EXPECT_TRUE(t->Has(feature::kStackdepotStats, R("6.8.0")).present);
}

TEST(FeatureTableTest, RejectsBadTables) {
  EXPECT_FALSE(FeatureTable::Parse("features: [").ok());
  EXPECT_FALSE(FeatureTable::Parse("rows: {}").ok());
  // Documents whose root is not a map.
  EXPECT_FALSE(FeatureTable::Parse("hello\n").ok());
  EXPECT_FALSE(FeatureTable::Parse("# only a comment\n").ok());
  EXPECT_FALSE(FeatureTable::Parse("- a\n- b\n").ok());
  EXPECT_FALSE(FeatureTable::Parse("").ok());
  EXPECT_FALSE(
      FeatureTable::Parse("features:\n  x:\n    description: d\n").ok());
  EXPECT_FALSE(
      FeatureTable::Parse("features:\n  x:\n    since: banana\n").ok());
  EXPECT_FALSE(FeatureTable::Parse(
                   "features:\n  x:\n    since: \"6.1\"\n    backports: 3\n")
                   .ok());
  absl::StatusOr<FeatureTable> bad =
      FeatureTable::Parse("features:\n  x:\n    since: banana\n");
  EXPECT_NE(bad.status().message().find("row x"), std::string::npos);
}

}  // namespace
}  // namespace tracehealth
