// The kernel feature table: which behaviour a kernel release has.
//
// One data table (common/kernel/features.yaml, compiled into the binaries)
// decides every version-dependent behaviour; operators can replace rows for
// vendor kernels with an override file. Every answer names the row it used,
// so predictions can show it in their basis.
//
// Thread safety: a FeatureTable is immutable after construction; const
// methods may be called concurrently.
#ifndef TRACEHEALTH_COMMON_KERNEL_FEATURE_TABLE_H_
#define TRACEHEALTH_COMMON_KERNEL_FEATURE_TABLE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/kernel/release.h"

namespace tracehealth {

// Row names of the built-in table.
namespace feature {
inline constexpr char kShadowStack4k[] = "shadow_stack_4k";
inline constexpr char kShadowStackPageKmalloc[] = "shadow_stack_page_kmalloc";
inline constexpr char kFgraphMultiUser[] = "fgraph_multi_user";
inline constexpr char kFgraphWalkRcu[] = "fgraph_walk_rcu";
inline constexpr char kRetstackBatch1024[] = "retstack_batch_1024";
inline constexpr char kFprobeOnFgraph[] = "fprobe_on_fgraph";
inline constexpr char kFprobeEntryOnlyOffFgraph[] =
    "fprobe_entry_only_off_fgraph";
inline constexpr char kKprobeMultiLink[] = "kprobe_multi_link";
inline constexpr char kFprobeEvents[] = "fprobe_events";
inline constexpr char kKprobeSession[] = "kprobe_session";
inline constexpr char kKretprobeMultiLinkType[] = "kretprobe_multi_link_type";
inline constexpr char kPreemptRcuLimited[] = "preempt_rcu_limited";
inline constexpr char kPreemptModesRestricted[] = "preempt_modes_restricted";
inline constexpr char kStackdepotStats[] = "stackdepot_stats";
inline constexpr char kPageOwnerStacks[] = "page_owner_stacks";
inline constexpr char kStackdepotMaxFrames[] = "stackdepot_max_frames";
inline constexpr char kStackdepotMaxPoolsParam[] = "stackdepot_max_pools_param";
inline constexpr char kVmapNodePurgeLists[] = "vmap_node_purge_lists";
inline constexpr char kKasanFlushCombined[] = "kasan_flush_combined";
inline constexpr char kKasanPurgeCondResched[] = "kasan_purge_cond_resched";
inline constexpr char kInvlpgbKernelFlush[] = "invlpgb_kernel_flush";
}  // namespace feature

// The releases that have a behaviour: a mainline release and stable
// backports.
struct FeatureReleases {
  // Unset: no release has it ("never").
  std::optional<KernelRelease> since;
  // First stable release of each branch that got a backport.
  std::vector<KernelRelease> backports;
};

struct FeatureRow {
  std::string name;
  std::string description;
  // The releases on every architecture not in `arches`.
  FeatureReleases releases;
  // Architectures (as uname -m names them: "x86_64", "aarch64") whose
  // releases differ, e.g. a backport that needs an ftrace feature the
  // architecture lacks.
  std::map<std::string, FeatureReleases> arches;
  // Where the row comes from: commit ids, mail, stable announcements.
  std::string source;
  // The release numbers are inferred (from when a commit reached a tree
  // during a merge window), not read from a release or stable announcement.
  bool inferred = false;
  // "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.32", or for
  // an architecture of `arches`
  // "fprobe_entry_only_off_fgraph [aarch64]: since 6.19; 6.18.y from 6.18.34".
  std::string ToString(absl::string_view arch = "") const;
  // The releases that apply on `arch` ("" or unlisted: `releases`).
  const FeatureReleases& For(absl::string_view arch) const;
};

// A row as written (features.yaml, an override file, a report's
// FeatureRow): releases as strings, `since` a release or "never".
struct FeatureRowText {
  std::string name;
  std::string description;
  std::string since;
  std::vector<std::string> backports;
  // arch -> (since, backports).
  std::map<std::string, std::pair<std::string, std::vector<std::string>>>
      arches;
  std::string source;
  // "verified" (or empty) or "inferred".
  std::string confidence;
};

// A row from its written form. Errors: InvalidArgument naming the row, for
// an empty name, a release that does not parse, an empty architecture name
// or a confidence other than "verified", "inferred" or empty.
absl::StatusOr<FeatureRow> MakeFeatureRow(const FeatureRowText& text);

// The written form of `row` (MakeFeatureRow(FeatureRowTextOf(row)) gives it
// back).
FeatureRowText FeatureRowTextOf(const FeatureRow& row);

// uname -m's name for an architecture, for the kernel's and Debian's names
// too: "arm64" -> "aarch64", "amd64" -> "x86_64"; others unchanged.
std::string NormalizeArch(absl::string_view arch);

struct FeatureAnswer {
  bool present = false;
  // The row used, as FeatureRow::ToString(arch), plus why it matched, e.g.
  // "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.32 -> 6.18.2:
  // no".
  std::string row;
  // The row's release numbers are inferred and `release` is on the branch
  // of the mainline release named, or the one before it: the answer may be
  // wrong by a release.
  bool uncertain = false;
};

class FeatureTable {
 public:
  // Parses the YAML form of features.yaml. Errors: InvalidArgument naming the
  // row for bad YAML, a missing `since`, or an unparsable release.
  static absl::StatusOr<FeatureTable> Parse(absl::string_view yaml);

  // The table compiled into the binary from features.yaml.
  static const FeatureTable& Builtin();

  // The built-in table with rows of `override_yaml` replacing (or adding)
  // rows of the same name.
  static absl::StatusOr<FeatureTable> WithOverride(
      absl::string_view override_yaml);

  // The built-in table with `rows` replacing (or adding) rows of the same
  // name.
  static FeatureTable BuiltinWith(const std::vector<FeatureRow>& rows);

  // Whether `release` on architecture `arch` ("": unknown, the row's
  // general releases apply) has `feature`: release >= since, or a backport
  // on the same stable branch at or below the release. NotFound for an
  // unknown row.
  absl::StatusOr<FeatureAnswer> Query(absl::string_view feature,
                                      const KernelRelease& release,
                                      absl::string_view arch = "") const;

  // Query(), for the built-in row names above (which always exist; an unknown
  // name answers not present with the reason in `row`).
  FeatureAnswer Has(absl::string_view feature, const KernelRelease& release,
                    absl::string_view arch = "") const;

  const std::map<std::string, FeatureRow>& rows() const { return rows_; }

 private:
  std::map<std::string, FeatureRow> rows_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_KERNEL_FEATURE_TABLE_H_
