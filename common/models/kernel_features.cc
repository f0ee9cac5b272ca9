#include "common/models/kernel_features.h"

#include "absl/strings/str_cat.h"

namespace tracehealth {

namespace {

KernelFeatures Resolve(const v1::KernelInfo& kernel,
                       const FeatureTable& table) {
  KernelFeatures f;
  if (!kernel.has_release()) {
    f.release_note = "kernel release unknown";
    return f;
  }
  absl::StatusOr<FeatureRelease> r = ReleaseForFeatures(
      kernel.release(), kernel.version(), kernel.upstream_version());
  if (!r.ok()) {
    f.release_note =
        absl::StrCat("kernel release unparsable: ", r.status().message());
    return f;
  }
  f.release = r->release;
  f.release_kind = r->kind;
  f.vendor = r->vendor;
  if (r->kind == ReleaseKind::kVendorUpstream) {
    f.release_source = v1::INPUT_SOURCE_DERIVED;
  }
  // An operator's table speaks for its vendor kernel; the built-in one
  // knows only mainline and stable releases.
  f.release_unknown = r->kind == ReleaseKind::kVendorUnmapped &&
                      &table == &FeatureTable::Builtin();
  f.arch = kernel.has_arch() ? NormalizeArch(kernel.arch()) : "";
  const KernelRelease& rel = *f.release;
  auto has = [&](const char* row) { return table.Has(row, rel, f.arch); };
  f.fprobe_on_fgraph = has(feature::kFprobeOnFgraph);
  f.fprobe_entry_only_off_fgraph = has(feature::kFprobeEntryOnlyOffFgraph);
  f.retstack_batch_1024 = has(feature::kRetstackBatch1024);
  f.shadow_stack_4k = has(feature::kShadowStack4k);
  f.shadow_stack_page_kmalloc = has(feature::kShadowStackPageKmalloc);
  f.fgraph_multi_user = has(feature::kFgraphMultiUser);
  f.fgraph_walk_rcu = has(feature::kFgraphWalkRcu);
  f.kprobe_multi_link = has(feature::kKprobeMultiLink);
  f.fprobe_events = has(feature::kFprobeEvents);
  f.kprobe_session = has(feature::kKprobeSession);
  f.preempt_rcu_limited = has(feature::kPreemptRcuLimited);
  f.preempt_modes_restricted = has(feature::kPreemptModesRestricted);
  f.stackdepot_max_pools_param = has(feature::kStackdepotMaxPoolsParam);
  f.vmap_node_purge_lists = has(feature::kVmapNodePurgeLists);
  f.kasan_flush_combined = has(feature::kKasanFlushCombined);
  f.kasan_purge_cond_resched = has(feature::kKasanPurgeCondResched);
  f.invlpgb_kernel_flush = has(feature::kInvlpgbKernelFlush);
  return f;
}

// What a resolution depends on.
struct ReleaseKey {
  bool has_release = false;
  std::string release;
  std::string version;
  std::string upstream;
  std::string arch;

  static ReleaseKey Of(const v1::KernelInfo& k) {
    return {k.has_release(), k.release(), k.version(), k.upstream_version(),
            k.arch()};
  }
  bool operator==(const ReleaseKey& o) const {
    return has_release == o.has_release && release == o.release &&
           version == o.version && upstream == o.upstream && arch == o.arch;
  }
};

}  // namespace

KernelFeatures ResolveKernelFeatures(const v1::KernelInfo& kernel,
                                     const FeatureTable& table) {
  // The built-in table never changes, so the last answer for it is kept
  // per thread: a host's release repeats from one evaluation to the next.
  // Other tables (operator overrides) may be replaced at the same address
  // and are resolved every time.
  if (&table != &FeatureTable::Builtin()) return Resolve(kernel, table);
  struct Memo {
    bool valid = false;
    ReleaseKey key;
    KernelFeatures features;
  };
  thread_local Memo memo;
  ReleaseKey key = ReleaseKey::Of(kernel);
  if (memo.valid && memo.key == key) return memo.features;
  memo.features = Resolve(kernel, table);
  memo.valid = true;
  memo.key = std::move(key);
  return memo.features;
}

KernelFeatures ResolveKernelFeatures(const v1::KernelInfo& kernel,
                                     const ModelOptions& options) {
  return ResolveKernelFeatures(kernel, options.features != nullptr
                                           ? *options.features
                                           : FeatureTable::Builtin());
}

}  // namespace tracehealth
