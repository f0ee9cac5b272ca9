// Stack depot pool budget model (docs/design.md §3.2).
//
// Budget ratio pools / max_pools (stack_depot_max_pools, default 8192 pools
// of 16 KiB), growth from the agent's sample history (least squares over
// pools against time), time to exhaustion, the hash backend's record size
// ALIGN(32 + 8 * frames, 16), and what the trie backend of seed 003 would
// use: measured on the host's own traces when the agent did that, otherwise
// the ratio measured by the real trie (DepotTrie) on the seed benchmark's
// workload, applied to the host's persistent bytes.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/models/stackdepot/depot_trie.h"
#include "common/models/stackdepot/generated_workload.h"
#include "common/models/stackdepot/trie_comparison.h"
#include "common/models/kernel_features.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// CONFIG_STACKDEPOT_MAX_FRAMES default.
inline constexpr uint32_t kDefaultStackdepotMaxFrames = 64;
// Exhaustion within this many seconds is a stall-level risk, within
// kWarnExhaustionSeconds a warning; a budget above kWarnBudgetRatio too.
inline constexpr double kStallExhaustionSeconds = 3600;
inline constexpr double kWarnExhaustionSeconds = 7 * 24 * 3600;
inline constexpr double kWarnBudgetRatio = 0.8;

// Runs the trie on a page_owner_stacks/show_stacks file's text (frames
// mapped to synthetic addresses, see page_owner_stacks.h) and returns what
// the agent reports in HostSnapshot.trie. Errors: the parser's
// InvalidArgument for malformed text.
absl::StatusOr<v1::TrieMeasurement> MeasureShowStacks(absl::string_view show_stacks);

// Pools per second by least squares over `history` (needs two samples at
// different times); unset otherwise.
std::optional<double> GrowthPoolsPerSecond(
    const google::protobuf::RepeatedPtrField<v1::DepotSample>& history);

// stack_depot_max_pools= from a kernel command line, when present and valid.
std::optional<uint64_t> MaxPoolsFromCmdline(absl::string_view cmdline);

v1::StackDepotPrediction PredictStackDepot(const v1::HostSnapshot& snapshot,
                                           const ModelOptions& options);
// The same into `*out` (reset first, its basis memory reused), with the
// snapshot's features resolved by the caller.
void PredictStackDepot(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                       const KernelFeatures& features, v1::StackDepotPrediction* out);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_STACK_DEPOT_H_
