#include "common/kernel/feature_table_override.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

constexpr char kVendorRows[] =
    "features:\n"
    "  kasan_flush_combined:\n"
    "    description: backported by the vendor\n"
    "    since: \"6.13\"\n"
    "    backports: [\"6.12.2\", \"6.6.60-x\"]\n"
    "  retstack_batch_1024:\n"
    "    since: never\n";

KernelRelease R(const char* s) { return *ParseKernelRelease(s); }

TEST(FeatureTableOverrideTest, RowsInNameOrderWithTheFilesDigest) {
  absl::StatusOr<v1::FeatureTableOverride> o =
      FeatureTableOverrideOf(kVendorRows);
  ASSERT_TRUE(o.ok()) << o.status();
  // sha256sum of the 172 bytes above.
  EXPECT_EQ(o->digest(),
            "sha256:"
            "86b5cc01cda0e0de29fb01f2818c2a2399310b4a1c5e631a57af4ab13af6d769");
  ASSERT_EQ(o->rows_size(), 2);
  EXPECT_EQ(o->rows(0).name(), "kasan_flush_combined");
  EXPECT_EQ(o->rows(0).description(), "backported by the vendor");
  EXPECT_EQ(o->rows(0).since(), "6.13");
  ASSERT_EQ(o->rows(0).backports_size(), 2);
  EXPECT_EQ(o->rows(0).backports(0), "6.12.2");
  EXPECT_EQ(o->rows(0).backports(1), "6.6.60-x");
  EXPECT_EQ(o->rows(1).name(), "retstack_batch_1024");
  EXPECT_EQ(o->rows(1).since(), "never");
  EXPECT_FALSE(FeatureTableOverrideOf("features: [1]").ok());
}

TEST(FeatureTableOverrideTest, Sha256OfKnownInputs) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(Sha256Digest(""),
            "sha256:"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Digest("abc"),
            "sha256:"
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(FeatureTableOverrideTest, TheTableComesBackAsTheAgentHadIt) {
  absl::StatusOr<v1::FeatureTableOverride> o =
      FeatureTableOverrideOf(kVendorRows);
  ASSERT_TRUE(o.ok());
  absl::StatusOr<FeatureTable> back = FeatureTableFromOverride(*o);
  ASSERT_TRUE(back.ok()) << back.status();
  absl::StatusOr<FeatureTable> agent = FeatureTable::WithOverride(kVendorRows);
  ASSERT_TRUE(agent.ok());
  for (const char* release : {"6.12.1", "6.12.2", "6.6.61", "6.13", "6.19"}) {
    for (const auto& [name, row] : agent->rows()) {
      EXPECT_EQ(back->Has(name, R(release)).row,
                agent->Has(name, R(release)).row)
          << name << " " << release;
    }
  }
  // The vendor's row, not the built-in one (6.12.y from 6.12.4).
  EXPECT_TRUE(back->Has(feature::kKasanFlushCombined, R("6.12.2")).present);
  EXPECT_FALSE(FeatureTable::Builtin()
                   .Has(feature::kKasanFlushCombined, R("6.12.2"))
                   .present);
  // Rows the override does not name stay built in.
  EXPECT_EQ(back->rows().size(), FeatureTable::Builtin().rows().size());
}

// An operator's arm64 kernel with its own backport of the entry-only
// change: the architecture's releases, source and confidence travel too.
TEST(FeatureTableOverrideTest, ArchitecturesSourcesAndConfidenceTravel) {
  constexpr char kArmRows[] =
      "features:\n"
      "  fprobe_entry_only_off_fgraph:\n"
      "    since: \"6.19\"\n"
      "    backports: [\"6.18.32\"]\n"
      "    arches:\n"
      "      arm64: {since: \"6.19\", backports: [\"6.18.20\"]}\n"
      "    source: vendor kernel changelog\n"
      "    confidence: inferred\n";
  absl::StatusOr<v1::FeatureTableOverride> o = FeatureTableOverrideOf(kArmRows);
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->rows_size(), 1);
  const v1::FeatureRow& row = o->rows(0);
  EXPECT_EQ(row.source(), "vendor kernel changelog");
  EXPECT_EQ(row.confidence(), "inferred");
  ASSERT_EQ(row.arches_size(), 1);
  EXPECT_EQ(row.arches(0).arch(), "aarch64");  // arm64 is uname's aarch64
  EXPECT_EQ(row.arches(0).since(), "6.19");
  ASSERT_EQ(row.arches(0).backports_size(), 1);
  EXPECT_EQ(row.arches(0).backports(0), "6.18.20");
  absl::StatusOr<FeatureTable> back = FeatureTableFromOverride(*o);
  ASSERT_TRUE(back.ok()) << back.status();
  // 6.18.20 on aarch64: the vendor's backport; on x86_64: not before 6.18.32.
  EXPECT_TRUE(
      back->Has(feature::kFprobeEntryOnlyOffFgraph, R("6.18.20"), "aarch64")
          .present);
  EXPECT_FALSE(
      back->Has(feature::kFprobeEntryOnlyOffFgraph, R("6.18.20"), "x86_64")
          .present);
  // A bad architecture release is refused by row.
  o->mutable_rows(0)->mutable_arches(0)->set_since("later");
  absl::Status st = FeatureTableFromOverride(*o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(st));
  EXPECT_NE(st.message().find("fprobe_entry_only_off_fgraph"),
            std::string::npos);
}

TEST(FeatureTableOverrideTest, RowsThatDoNotParseAreRefusedByName) {
  v1::FeatureTableOverride o;
  v1::FeatureRow* r = o.add_rows();
  r->set_name("kasan_flush_combined");
  r->set_since("banana");
  absl::Status st = FeatureTableFromOverride(o).status();
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_NE(st.message().find("kasan_flush_combined"), std::string::npos) << st;
  r->set_since("never");
  r->add_backports("6.x");
  EXPECT_TRUE(absl::IsInvalidArgument(FeatureTableFromOverride(o).status()));
  r->clear_backports();
  r->set_name("");
  st = FeatureTableFromOverride(o).status();
  EXPECT_NE(st.message().find("no name"), std::string::npos) << st;
  r->set_name("new_row");
  EXPECT_TRUE(FeatureTableFromOverride(o).ok());
  EXPECT_TRUE(FeatureTableFromOverride(v1::FeatureTableOverride()).ok());
}

}  // namespace
}  // namespace tracehealth
