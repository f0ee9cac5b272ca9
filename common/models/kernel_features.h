// The kernel release of a snapshot and the feature-table answers the models
// need, resolved once per snapshot (parsing the release and querying the
// table is the costly part of a prediction otherwise repeated per model and
// per probe kind).
//
// The table is asked about the release the feature rows mean
// (common/kernel/vendor_release.h): a Debian or Ubuntu release's upstream
// version when the agent found it, else the running release; on the
// snapshot's architecture.
//
// Thread safety: safe to call concurrently; the result is a plain value. For
// the built-in table the last resolution is memoised per thread (same
// input, same answer).
#ifndef TRACEHEALTH_COMMON_MODELS_KERNEL_FEATURES_H_
#define TRACEHEALTH_COMMON_MODELS_KERNEL_FEATURES_H_

#include <optional>
#include <string>

#include "common/kernel/feature_table.h"
#include "common/kernel/release.h"
#include "common/kernel/vendor_release.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

struct KernelFeatures {
  // The release the rows were asked about. Unset when the snapshot has no
  // release or it does not parse; then `release_note` says why and every
  // answer below is "not present".
  std::optional<KernelRelease> release;
  std::string release_note;
  ReleaseKind release_kind = ReleaseKind::kMainline;
  std::string vendor;
  // How far the release can be trusted as an input: MEASURED for mainline,
  // stable and -rc releases, DERIVED for a vendor release asked about its
  // upstream version. A vendor release without one, judged by the built-in
  // table, is counted as an input the models could not get
  // (`release_unknown`): its backports are unknown.
  v1::InputSource release_source = v1::INPUT_SOURCE_MEASURED;
  bool release_unknown = false;
  // uname -m architecture the rows were asked for ("" unknown).
  std::string arch;
  FeatureAnswer fprobe_on_fgraph;
  FeatureAnswer fprobe_entry_only_off_fgraph;
  FeatureAnswer retstack_batch_1024;
  FeatureAnswer shadow_stack_4k;
  FeatureAnswer shadow_stack_page_kmalloc;
  FeatureAnswer fgraph_multi_user;
  FeatureAnswer fgraph_walk_rcu;
  FeatureAnswer kprobe_multi_link;
  FeatureAnswer fprobe_events;
  FeatureAnswer kprobe_session;
  FeatureAnswer preempt_rcu_limited;
  FeatureAnswer preempt_modes_restricted;
  FeatureAnswer stackdepot_max_pools_param;
  FeatureAnswer vmap_node_purge_lists;
  FeatureAnswer kasan_flush_combined;
  FeatureAnswer kasan_purge_cond_resched;
  FeatureAnswer invlpgb_kernel_flush;
};

KernelFeatures ResolveKernelFeatures(const v1::KernelInfo& kernel,
                                     const FeatureTable& table);
// The same with options.features (nullptr: the built-in table).
KernelFeatures ResolveKernelFeatures(const v1::KernelInfo& kernel,
                                     const ModelOptions& options);

// A model's entry point without resolved features: resolves the snapshot's
// and returns what `predict(snapshot, options, features, &out)` fills.
template <typename Prediction, typename Predict>
Prediction PredictWithFeatures(const v1::HostSnapshot& snapshot,
                               const ModelOptions& options, Predict predict) {
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), options);
  Prediction out;
  predict(snapshot, options, features, &out);
  return out;
}

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_KERNEL_FEATURES_H_
