// Stack depot pool budget model, the numbers (docs/design.md §3.2).
//
// Budget ratio pools / max_pools (stack_depot_max_pools; pools of 4 pages
// and their default count by page size: depot_pools.h), growth from the
// agent's sample history (least squares over pools against time), time to
// exhaustion, the hash backend's record size ALIGN(32 + 8 * frames, 16),
// and what the proposed trie backend would use for the records it would
// hold: the persistent ones (persistent_count, persistent_bytes), at the
// trie/hash ratio the real trie (DepotTrie) achieves on the host's own
// page_owner stacks when the agent measured them, else on the trie
// series' benchmark workload. (page_owner's own records are refcounted:
// they stay in the hash, so their bytes are not a saving.)
//
// This file computes what a report carries (numbers, risk, checks,
// confidence); stack_depot_explain.h writes the summary and basis.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/models/kernel_features.h"
#include "common/models/model_inputs.h"
#include "common/models/model_options.h"
#include "common/models/stackdepot/depot_pools.h"
#include "common/models/stackdepot/trie/depot_trie.h"
#include "common/models/stackdepot/trie/generated_workload.h"
#include "common/models/stackdepot/trie/trie_comparison.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// CONFIG_STACKDEPOT_MAX_FRAMES default, and the input's name.
inline constexpr uint32_t kDefaultStackdepotMaxFrames = 64;
inline constexpr char kMaxFramesInput[] = "kernel.config_stackdepot_max_frames";
// Exhaustion within this many seconds is a stall-level risk, within
// kWarnExhaustionSeconds a warning; a budget above kWarnBudgetRatio too.
inline constexpr double kStallExhaustionSeconds = 3600;
inline constexpr double kWarnExhaustionSeconds = 7 * 24 * 3600;
inline constexpr double kWarnBudgetRatio = 0.8;

// Runs the trie on a page_owner_stacks/show_stacks file's text (frames
// mapped to synthetic addresses, see page_owner_stacks.h) and returns what
// the agent reports in HostSnapshot.trie. Errors: the parser's
// InvalidArgument for malformed text.
absl::StatusOr<v1::TrieMeasurement> MeasureShowStacks(
    absl::string_view show_stacks);

// The growth rate now. The depot only grows, by stacks it has not seen:
// fast while the kernel boots and a workload starts, then slower, so a line
// through the whole history (up to 64 samples, 5.3 h) prices the boot's
// growth as today's and predicts exhaustion far too soon. Of `history`
// (oldest first, the newest taken now):
//   - samples taken in the first kBootSettleSeconds after boot (boot =
//     newest sample's time - `uptime_seconds`, when known) are left out,
//     while at least two later ones remain;
//   - of the rest, those within kGrowthWindowSeconds of the newest (at
//     least the newest two);
// and the least-squares slope of pools over them, in pools per second
// (needs two samples at different times; unset otherwise). A growth that
// speeds up (a new workload) shows within the window too.
inline constexpr double kBootSettleSeconds = 600;
inline constexpr double kGrowthWindowSeconds = 3600;
std::optional<double> GrowthPoolsPerSecond(
    const google::protobuf::RepeatedPtrField<v1::DepotSample>& history,
    std::optional<double> uptime_seconds = std::nullopt);

// The inputs of a stack depot prediction, in the order its basis lists them.
enum class DepotInput {
  kConfigStackdepot,  // kernel.config_stackdepot
  kConfigKasan,       // kernel.config_kasan
  kMaxFrames,         // kernel.config_stackdepot_max_frames
  kPageSize,          // kernel.page_size
  kMaxPools,          // stackdepot.max_pools
  kPools,             // stackdepot.pools
  kLastSamplePools,   // depot_history.last.pools
  kHistory,           // depot_history
  kPersistentBytes,   // stackdepot.persistent_bytes
};
using DepotInputs = ModelInputs<DepotInput, 10>;

// Where max_pools comes from: the debugfs stats, stack_depot_max_pools= on
// the command line (honoured from 6.17, ignored before), or the default.
enum class MaxPoolsFrom { kStats, kCmdline, kCmdlineIgnored, kDefault };
// What the trie estimate is made of: the host's persistent bytes at the
// ratio measured on its own page_owner stacks, or at the generated
// workload's ratio, or (persistent bytes unknown) the generated workload
// alone.
enum class TrieFrom { kHostTraces, kHostBytes, kGenerated };

// What decides a stack depot prediction.
struct DepotCase {
  // Any of CONFIG_STACKDEPOT/KASAN/PAGE_OWNER known, and any of them on.
  bool any_config = false;
  bool users = false;
  // The host keeps persistent stack records (a user, or pools counted).
  bool applies = false;
  uint32_t max_frames = kDefaultStackdepotMaxFrames;
  // Page size (4096 when unknown), its pool size and the kernel's limit.
  uint32_t page_size = 4096;
  uint64_t pool_bytes = 0;
  uint64_t pool_limit = 0;
  uint64_t max_pools = 0;
  MaxPoolsFrom max_pools_from = MaxPoolsFrom::kDefault;
  // stack_depot_max_pools= occurrences the kernel refuses, and why.
  std::string max_pools_refused;
  // Pools in use: the stats, else the last history sample; unset: unknown.
  std::optional<uint64_t> pools;
  std::optional<double> growth;  // pools per second
  TrieFrom trie_from = TrieFrom::kGenerated;
  DepotInputs inputs;
  int unknown_inputs = 0;
  // Feature rows used whose inferred release is next to this kernel's.
  int uncertain_rows = 0;
};
// `growth` is GrowthPoolsPerSecond of the snapshot's history and uptime
// (DepotGrowthOf), which the
// caller has (the numbers compute it, the explanation reads it from the
// prediction).
// GrowthPoolsPerSecond(snapshot.depot_history(), its threads' uptime).
std::optional<double> DepotGrowthOf(const v1::HostSnapshot& snapshot);
DepotCase MakeDepotCase(const v1::HostSnapshot& snapshot,
                        const KernelFeatures& features,
                        std::optional<double> growth);

// The stack depot prediction's numbers (see evaluate.h): everything but the
// summary and the basis's lists (stack_depot_explain.h writes those).
v1::StackDepotPrediction PredictStackDepot(const v1::HostSnapshot& snapshot,
                                           const ModelOptions& options);
// The same into `*out` (reset first, its basis memory kept), with the
// snapshot's features resolved by the caller.
void PredictStackDepot(const v1::HostSnapshot& snapshot,
                       const ModelOptions& options,
                       const KernelFeatures& features,
                       v1::StackDepotPrediction* out);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_H_
