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
inline constexpr char kRetstackBatch1024[] = "retstack_batch_1024";
inline constexpr char kFprobeOnFgraph[] = "fprobe_on_fgraph";
inline constexpr char kFprobeEntryOnlyOffFgraph[] =
    "fprobe_entry_only_off_fgraph";
inline constexpr char kKretprobeMultiLinkType[] = "kretprobe_multi_link_type";
inline constexpr char kStackdepotStats[] = "stackdepot_stats";
inline constexpr char kPageOwnerStacks[] = "page_owner_stacks";
inline constexpr char kStackdepotMaxFrames[] = "stackdepot_max_frames";
inline constexpr char kStackdepotMaxPoolsParam[] = "stackdepot_max_pools_param";
inline constexpr char kVmapNodePurgeLists[] = "vmap_node_purge_lists";
inline constexpr char kKasanFlushCombined[] = "kasan_flush_combined";
inline constexpr char kKasanPurgeCondResched[] = "kasan_purge_cond_resched";
inline constexpr char kInvlpgbKernelFlush[] = "invlpgb_kernel_flush";
}  // namespace feature

struct FeatureRow {
  std::string name;
  std::string description;
  // Unset: no release has it ("never").
  std::optional<KernelRelease> since;
  // First stable release of each branch that got a backport.
  std::vector<KernelRelease> backports;
  // "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.35".
  std::string ToString() const;
};

// A row from its written form: `since` a release or "never", `backports`
// releases. Errors: InvalidArgument naming the row, for an empty name or a
// release that does not parse.
absl::StatusOr<FeatureRow> MakeFeatureRow(
    absl::string_view name, absl::string_view description,
    absl::string_view since, const std::vector<std::string>& backports);

struct FeatureAnswer {
  bool present = false;
  // The row used, as FeatureRow::ToString(), plus why it matched, e.g.
  // "fprobe_entry_only_off_fgraph: since 6.19; 6.18.y from 6.18.35 -> 6.18.2:
  // no".
  std::string row;
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

  // Whether `release` has `feature`: release >= since, or a backport on the
  // same stable branch at or below the release. NotFound for an unknown row.
  absl::StatusOr<FeatureAnswer> Query(absl::string_view feature,
                                      const KernelRelease& release) const;

  // Query(), for the built-in row names above (which always exist; an unknown
  // name answers not present with the reason in `row`).
  FeatureAnswer Has(absl::string_view feature,
                    const KernelRelease& release) const;

  const std::map<std::string, FeatureRow>& rows() const { return rows_; }

 private:
  std::map<std::string, FeatureRow> rows_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_KERNEL_FEATURE_TABLE_H_
