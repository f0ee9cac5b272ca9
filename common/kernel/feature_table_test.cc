#include "common/kernel/feature_table.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

KernelRelease R(const char* s) {
  absl::StatusOr<KernelRelease> r = ParseKernelRelease(s);
  EXPECT_TRUE(r.ok()) << s;
  return *r;
}

bool Has(const char* feature, const char* release, const char* arch = "") {
  return FeatureTable::Builtin().Has(feature, R(release), arch).present;
}

// Entry-only BPF kprobe_multi pays the fgraph walk when fprobe sits on fgraph
// and the entry-only optimisation is absent.
bool EntryOnlyKprobeMultiUsesFgraph(const char* release,
                                    const char* arch = "x86_64") {
  return Has(feature::kFprobeOnFgraph, release, arch) &&
         !Has(feature::kFprobeEntryOnlyOffFgraph, release, arch);
}

TEST(FeatureTableTest, BuiltinHasEveryNamedRow) {
  for (const char* name : {feature::kShadowStack4k,
                           feature::kShadowStackPageKmalloc,
                           feature::kRetstackBatch1024,
                           feature::kFprobeOnFgraph,
                           feature::kFprobeEntryOnlyOffFgraph,
                           feature::kKretprobeMultiLinkType,
                           feature::kStackdepotStats,
                           feature::kPageOwnerStacks,
                           feature::kStackdepotMaxPoolsParam,
                           feature::kVmapNodePurgeLists,
                           feature::kKasanFlushCombined,
                           feature::kKasanPurgeCondResched,
                           feature::kInvlpgbKernelFlush,
                           feature::kFgraphMultiUser,
                           feature::kFgraphWalkRcu,
                           feature::kKprobeMultiLink,
                           feature::kFprobeEvents,
                           feature::kKprobeSession,
                           feature::kPreemptRcuLimited,
                           feature::kPreemptModesRestricted}) {
    EXPECT_TRUE(FeatureTable::Builtin().Query(name, R("6.1")).ok()) << name;
  }
}

TEST(FeatureTableTest, EveryBuiltinRowHasASource) {
  for (const auto& [name, row] : FeatureTable::Builtin().rows()) {
    EXPECT_GT(row.source.size(), 20u) << name;
    // An inferred row says so in its source too.
    if (row.inferred) {
      EXPECT_NE(row.source.find("inferred"), std::string::npos) << name;
    }
  }
}

// 2c67dc457bc6 reached 6.18.y in 6.18.32 ("[PATCH 6.18 178/188]" in the
// 6.18.32-rc1 review), effective only with DYNAMIC_FTRACE_WITH_REGS; arm64
// has WITH_ARGS only and needs cd06078a38aa too, which came in 6.18.34
// ("[PATCH 6.18 072/377]" in the 6.18.34-rc1 review). Both are in 6.19.
TEST(FeatureTableTest, EntryOnlyKprobeMultiUsesFgraph) {
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.14.0-1012-aws"));
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.18.2"));
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.18.31"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.18.32"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.13.12"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.18.35"));
  // arm64: 6.18.32 and .33 still pay, 6.18.34 does not; "arm64" is aarch64.
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.18.32", "aarch64"));
  EXPECT_TRUE(EntryOnlyKprobeMultiUsesFgraph("6.18.33", "arm64"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.18.34", "aarch64"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.19", "aarch64"));
  // An unknown architecture gets the row's general releases.
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.18.32", ""));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.18.44-fc-v669"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.19"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("7.1.5"));
  EXPECT_FALSE(EntryOnlyKprobeMultiUsesFgraph("6.1.0-57-cloud-amd64"));
}

// Every row's mainline boundary: the last stable release of the branch
// before it has no feature, the first release with it (x.y, x.y.0) has it.
TEST(FeatureTableTest, EveryRowAtItsMainlineBoundary) {
  struct Boundary {
    const char* row;
    const char* before;  // last release without it
    const char* since;   // first release with it
  };
  constexpr Boundary kBoundaries[] = {
      {feature::kShadowStack4k, "6.12.30", "6.13"},
      {feature::kShadowStackPageKmalloc, "6.10.14", "6.11"},
      {feature::kFgraphMultiUser, "6.10.14", "6.11"},
      {feature::kFgraphWalkRcu, "5.9.16", "5.10"},
      {feature::kFprobeOnFgraph, "6.13.12", "6.14"},
      {feature::kFprobeEntryOnlyOffFgraph, "6.18.31", "6.19"},
      {feature::kKprobeMultiLink, "5.17.15", "5.18"},
      {feature::kFprobeEvents, "6.4.16", "6.5"},
      {feature::kKprobeSession, "6.9.12", "6.10"},
      {feature::kKretprobeMultiLinkType, "6.16.12", "6.17"},
      {feature::kPreemptRcuLimited, "6.14.11", "6.15"},
      {feature::kStackdepotStats, "6.7.12", "6.8"},
      {feature::kPageOwnerStacks, "6.8.12", "6.9"},
      {feature::kStackdepotMaxFrames, "6.7.12", "6.8"},
      {feature::kStackdepotMaxPoolsParam, "6.16.12", "6.17"},
      {feature::kVmapNodePurgeLists, "6.8.12", "6.9"},
      {feature::kKasanFlushCombined, "6.11.11", "6.13"},
      {feature::kKasanPurgeCondResched, "6.19.8", "7.0"},
      {feature::kInvlpgbKernelFlush, "6.14.11", "6.15"},
  };
  for (const Boundary& b : kBoundaries) {
    SCOPED_TRACE(b.row);
    EXPECT_FALSE(Has(b.row, b.before)) << b.before;
    EXPECT_TRUE(Has(b.row, b.since)) << b.since;
    const std::string dot_zero = std::string(b.since) + ".0";
    EXPECT_TRUE(Has(b.row, dot_zero.c_str())) << dot_zero;
  }
  // No release has the 1024-thread batch yet.
  EXPECT_FALSE(Has(feature::kRetstackBatch1024, "6.19"));
  EXPECT_FALSE(Has(feature::kRetstackBatch1024, "7.1.5"));
}

TEST(FeatureTableTest, BackportsApplyOnlyToTheirBranch) {
  // 9e9e085effe9: mainline 6.13, 6.12.y from 6.12.4 ("[PATCH 6.12 000/146]
  // 6.12.4-rc1 review"); 6.11 never got it.
  EXPECT_TRUE(Has(feature::kKasanFlushCombined, "6.12.4"));
  EXPECT_FALSE(Has(feature::kKasanFlushCombined, "6.12.3"));
  EXPECT_TRUE(Has(feature::kKasanFlushCombined, "6.12.9"));
  EXPECT_FALSE(Has(feature::kKasanFlushCombined, "6.11.11"));
  EXPECT_TRUE(Has(feature::kKasanFlushCombined, "6.13"));
  // 5747435e0fd4: mainline 7.0, 6.18.y from 6.18.16 ("[PATCH 6.18 627/752]"
  // in the 6.18.16-rc1 review), 6.12.y from 6.12.75 (linux-stable-rc's
  // linux-6.12.y, before "Linux 6.12.75-rc2"); the 6.19.y release is not
  // verified.
  EXPECT_TRUE(Has(feature::kKasanPurgeCondResched, "7.0"));
  EXPECT_TRUE(Has(feature::kKasanPurgeCondResched, "7.0.3"));
  EXPECT_TRUE(Has(feature::kKasanPurgeCondResched, "6.18.16"));
  EXPECT_FALSE(Has(feature::kKasanPurgeCondResched, "6.18.15"));
  EXPECT_FALSE(Has(feature::kKasanPurgeCondResched, "6.19.0"));
  EXPECT_FALSE(Has(feature::kKasanPurgeCondResched, "6.12.60"));
  EXPECT_FALSE(Has(feature::kKasanPurgeCondResched, "6.12.74"));
  EXPECT_TRUE(Has(feature::kKasanPurgeCondResched, "6.12.75"));
  EXPECT_FALSE(Has(feature::kKasanPurgeCondResched, "6.13.0"));
}

TEST(FeatureTableTest, ReleaseBoundariesOfTheRows) {
  // INVLPGB kernel flushes: 82378c6c2f43 merged after v6.14-rc7 -> 6.15.
  EXPECT_FALSE(Has(feature::kInvlpgbKernelFlush, "6.14.11"));
  EXPECT_TRUE(Has(feature::kInvlpgbKernelFlush, "6.15"));
  // BPF kprobe_multi links: 0dcac2725406, v5.18.
  EXPECT_FALSE(Has(feature::kKprobeMultiLink, "5.17.15"));
  EXPECT_TRUE(Has(feature::kKprobeMultiLink, "5.18"));
  EXPECT_FALSE(Has(feature::kKprobeMultiLink, "5.4.280"));
  // fprobe events 6.5, kprobe session 6.10.
  EXPECT_FALSE(Has(feature::kFprobeEvents, "6.4.16"));
  EXPECT_TRUE(Has(feature::kFprobeEvents, "6.5"));
  EXPECT_FALSE(Has(feature::kKprobeSession, "6.9.12"));
  EXPECT_TRUE(Has(feature::kKprobeSession, "6.10"));
  // The walk under RCU from 5.10 (tasklist_lock before).
  EXPECT_FALSE(Has(feature::kFgraphWalkRcu, "5.9.16"));
  EXPECT_TRUE(Has(feature::kFgraphWalkRcu, "5.10"));
  // Multi-user fgraph 6.11 (a second user got -EBUSY before).
  EXPECT_FALSE(Has(feature::kFgraphMultiUser, "6.10.14"));
  EXPECT_TRUE(Has(feature::kFgraphMultiUser, "6.11"));
  // PREEMPT_RCU limited to PREEMPT/RT/DYNAMIC from 6.15.
  EXPECT_FALSE(Has(feature::kPreemptRcuLimited, "6.14.11"));
  EXPECT_TRUE(Has(feature::kPreemptRcuLimited, "6.15"));
}

// 7dadeaa6e851 (7.0): x86, arm64, loongarch, powerpc, riscv and s390 keep
// only full and lazy; other architectures keep every mode.
TEST(FeatureTableTest, PreemptionModesRestrictedByArchitecture) {
  EXPECT_FALSE(Has(feature::kPreemptModesRestricted, "6.19.8", "x86_64"));
  EXPECT_TRUE(Has(feature::kPreemptModesRestricted, "7.0", "x86_64"));
  EXPECT_TRUE(Has(feature::kPreemptModesRestricted, "7.0", "arm64"));
  EXPECT_TRUE(Has(feature::kPreemptModesRestricted, "7.1.5", "s390x"));
  EXPECT_FALSE(Has(feature::kPreemptModesRestricted, "7.1.5", "alpha"));
  EXPECT_FALSE(Has(feature::kPreemptModesRestricted, "7.1.5", ""));
}

TEST(FeatureTableTest, InferredRowsAreUncertainNextToTheirRelease) {
  // fprobe_events: release 6.5 inferred from the merge window.
  const FeatureTable& t = FeatureTable::Builtin();
  EXPECT_FALSE(t.Has(feature::kFprobeEvents, R("6.3")).uncertain);
  EXPECT_TRUE(t.Has(feature::kFprobeEvents, R("6.4.2")).uncertain);
  EXPECT_TRUE(t.Has(feature::kFprobeEvents, R("6.5.0")).uncertain);
  EXPECT_FALSE(t.Has(feature::kFprobeEvents, R("6.6")).uncertain);
  EXPECT_NE(t.Has(feature::kFprobeEvents, R("6.5.0")).row.find("inferred"),
            std::string::npos);
  // kasan_flush_combined is verified: never uncertain.
  EXPECT_FALSE(t.Has(feature::kKasanFlushCombined, R("6.12.4")).uncertain);
  EXPECT_FALSE(t.Has(feature::kKasanFlushCombined, R("6.13")).uncertain);
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
            "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.32 -> "
            "6.18.35: yes (6.18.y backport)");
  a = FeatureTable::Builtin().Has(feature::kFprobeEntryOnlyOffFgraph,
                                  R("6.18.33"), "aarch64");
  EXPECT_FALSE(a.present);
  EXPECT_EQ(a.row,
            "fprobe_entry_only_off_fgraph [aarch64]: since 6.19; 6.18.y from "
            "6.18.34 -> 6.18.33: no");
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
  auto refused = [](const char* yaml, const std::string& message) {
    absl::StatusOr<FeatureTable> t = FeatureTable::Parse(yaml);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << yaml;
    EXPECT_EQ(t.status().message(), message) << yaml;
  };
  absl::StatusOr<FeatureTable> broken = FeatureTable::Parse("features: [");
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(broken.status().message(), "feature table: "))
      << broken.status();
  refused("rows: {}", "feature table: no `features:` map");
  // Documents whose root is not a map.
  for (const char* yaml : {"hello\n", "# only a comment\n", "- a\n- b\n", ""})
    refused(yaml, "feature table: the document is not a map");
  refused("features:\n  x:\n    description: d\n",
          "feature table row x: missing `since`");
  refused("features:\n  x:\n    since: \"6.1\"\n    backports: 3\n",
          "feature table row x: `backports` is not a list");
  absl::StatusOr<FeatureTable> bad =
      FeatureTable::Parse("features:\n  x:\n    since: banana\n");
  EXPECT_NE(bad.status().message().find("row x"), std::string::npos);
  // confidence is verified or inferred.
  bad = FeatureTable::Parse(
      "features:\n  x:\n    since: \"6.1\"\n    confidence: maybe\n");
  EXPECT_NE(bad.status().message().find("confidence"), std::string::npos)
      << bad.status();
  // An architecture's releases parse like the row's.
  bad = FeatureTable::Parse(
      "features:\n  x:\n    since: \"6.1\"\n    arches:\n      aarch64: "
      "{since: soon}\n");
  EXPECT_NE(bad.status().message().find("aarch64"), std::string::npos)
      << bad.status();
  EXPECT_FALSE(FeatureTable::Parse("features:\n  x:\n    since: \"6.1\"\n"
                                   "    arches: [x86_64]\n")
                   .ok());
}

TEST(FeatureTableTest, WrittenFormRoundTrips) {
  for (const auto& [name, row] : FeatureTable::Builtin().rows()) {
    absl::StatusOr<FeatureRow> back = MakeFeatureRow(FeatureRowTextOf(row));
    ASSERT_TRUE(back.ok()) << name << ": " << back.status();
    EXPECT_EQ(back->ToString(), row.ToString()) << name;
    EXPECT_EQ(back->ToString("aarch64"), row.ToString("aarch64")) << name;
    EXPECT_EQ(back->inferred, row.inferred) << name;
    EXPECT_EQ(back->source, row.source) << name;
  }
}

}  // namespace
}  // namespace tracehealth
