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
  absl::StatusOr<KernelRelease> parsed = ParseKernelRelease(kernel.release());
  if (!parsed.ok()) {
    f.release_note =
        absl::StrCat("kernel release unparsable: ", parsed.status().message());
    return f;
  }
  f.release = *parsed;
  f.fprobe_on_fgraph = table.Has(feature::kFprobeOnFgraph, *f.release);
  f.fprobe_entry_only_off_fgraph =
      table.Has(feature::kFprobeEntryOnlyOffFgraph, *f.release);
  f.retstack_batch_1024 = table.Has(feature::kRetstackBatch1024, *f.release);
  f.stackdepot_max_pools_param =
      table.Has(feature::kStackdepotMaxPoolsParam, *f.release);
  f.kasan_flush_combined = table.Has(feature::kKasanFlushCombined, *f.release);
  f.kasan_purge_cond_resched =
      table.Has(feature::kKasanPurgeCondResched, *f.release);
  f.invlpgb_kernel_flush = table.Has(feature::kInvlpgbKernelFlush, *f.release);
  return f;
}

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
    bool has_release = false;
    std::string release;
    KernelFeatures features;
  };
  thread_local Memo memo;
  if (memo.valid && memo.has_release == kernel.has_release() &&
      memo.release == kernel.release()) {
    return memo.features;
  }
  memo.features = Resolve(kernel, table);
  memo.valid = true;
  memo.has_release = kernel.has_release();
  memo.release = kernel.release();
  return memo.features;
}

KernelFeatures ResolveKernelFeatures(const v1::KernelInfo& kernel,
                                     const ModelOptions& options) {
  return ResolveKernelFeatures(kernel, options.features != nullptr
                                           ? *options.features
                                           : FeatureTable::Builtin());
}

}  // namespace tracehealth
