#include "common/models/vmap/vmap_purge.h"

#include <algorithm>

#include "common/models/basis.h"
#include "common/models/risk.h"

namespace tracehealth {

int Fls(uint32_t x) {
  int bits = 0;
  while (x != 0) {
    ++bits;
    x >>= 1;
  }
  return bits;
}

uint64_t LazyMaxPages(uint32_t online_cpus, uint32_t page_size) {
  if (page_size == 0) page_size = 4096;
  return static_cast<uint64_t>(Fls(online_cpus)) * (32ull << 20) / page_size;
}

uint32_t VmapNodes(uint32_t cpus) {
  return std::clamp<uint32_t>(cpus, 1, kMaxVmapNodes);
}

double PerFlushSeconds(uint32_t cpus, bool invlpgb, const VmapConstants& c) {
  if (invlpgb) return c.invlpgb_flush;
  return c.a + c.b * static_cast<double>(cpus);
}

namespace {

constexpr uint32_t kDefaultCpus = 64;
constexpr uint32_t kDefaultPageSize = 4096;
// With generic KASAN one shadow page covers 8 pages of vmalloc space.
constexpr uint64_t kPagesPerShadowPage = 8;

v1::InputSource MeasuredIf(bool measured) {
  return measured ? v1::INPUT_SOURCE_MEASURED : v1::INPUT_SOURCE_DEFAULT;
}

// Flushes per purge: one per active vmap node plus one after the combining
// change; before it one per pending area owning a whole shadow page plus
// one (every pending area, when only those are counted); with nothing known
// of the pending areas, the worst case at the lazy threshold.
void CountFlushes(const v1::VmallocState& vm, VmapCase* k) {
  if (k->combined) {
    k->flushes_from = FlushesFrom::kVmapNodes;
    k->nodes = VmapNodes(k->cpus);
    if (vm.has_unpurged_areas() && vm.unpurged_areas() < k->nodes) {
      k->nodes =
          static_cast<uint32_t>(std::max<uint64_t>(vm.unpurged_areas(), 1));
      k->nodes_from_areas = true;
    }
  } else if (vm.has_unpurged_shadow_page_areas()) {
    k->flushes_from = FlushesFrom::kShadowPageAreas;
    k->inputs.Add(VmapInput::kShadowPageAreas, v1::INPUT_SOURCE_MEASURED);
  } else if (vm.has_unpurged_areas()) {
    k->flushes_from = FlushesFrom::kAreas;
    k->inputs.Add(VmapInput::kUnpurgedAreas, v1::INPUT_SOURCE_MEASURED);
  } else {
    k->flushes_from = FlushesFrom::kLazyThreshold;
    ++k->unknown_inputs;
  }
}

uint64_t FlushesPerPurge(const VmapCase& k, const v1::VmallocState& vm,
                         uint64_t lazy_threshold_pages) {
  switch (k.flushes_from) {
    case FlushesFrom::kVmapNodes:
      return static_cast<uint64_t>(k.nodes) + 1;
    case FlushesFrom::kShadowPageAreas:
      return vm.unpurged_shadow_page_areas() + 1;
    case FlushesFrom::kAreas:
      return vm.unpurged_areas() + 1;
    case FlushesFrom::kLazyThreshold:
      break;
  }
  return lazy_threshold_pages / kPagesPerShadowPage + 1;
}

}  // namespace

VmapCase MakeVmapCase(const v1::HostSnapshot& snapshot,
                      const KernelFeatures& features) {
  VmapCase k;
  const v1::KernelInfo& kernel = snapshot.kernel();
  k.config_known = kernel.has_config_kasan_vmalloc();
  if (!k.config_known) {
    k.unknown_inputs = 1;
    return k;
  }
  k.inputs.Add(VmapInput::kConfigKasanVmalloc, v1::INPUT_SOURCE_MEASURED);
  k.applies = kernel.config_kasan_vmalloc();
  if (!k.applies) return k;

  const bool cpus_known =
      snapshot.cpus().has_online() && snapshot.cpus().online() > 0;
  k.cpus = cpus_known ? snapshot.cpus().online() : kDefaultCpus;
  k.inputs.Add(VmapInput::kCpus, MeasuredIf(cpus_known));
  const bool page_size_known = kernel.has_page_size() && kernel.page_size() > 0;
  k.page_size = page_size_known ? kernel.page_size() : kDefaultPageSize;
  k.inputs.Add(VmapInput::kPageSize, MeasuredIf(page_size_known));
  const v1::VmallocState& vm = snapshot.vmalloc();
  if (vm.has_unpurged_bytes())
    k.inputs.Add(VmapInput::kUnpurgedBytes, v1::INPUT_SOURCE_MEASURED);

  k.release_known = features.release.has_value();
  if (k.release_known) {
    k.inputs.Add(VmapInput::kRelease, v1::INPUT_SOURCE_MEASURED);
    k.combined = features.kasan_flush_combined.present;
    k.cond_resched = features.kasan_purge_cond_resched.present;
    if (features.invlpgb_kernel_flush.present) {
      const bool flag_known = snapshot.cpus().has_invlpgb();
      k.invlpgb = flag_known && snapshot.cpus().invlpgb();
      k.inputs.Add(VmapInput::kInvlpgb, MeasuredIf(flag_known));
    }
  } else {
    ++k.unknown_inputs;  // assumed not combined: the worst case
  }
  CountFlushes(vm, &k);
  k.inputs.Add(VmapInput::kPreemptMode,
               MeasuredIf(kernel.preempt_mode() != v1::PREEMPT_MODE_UNKNOWN));
  return k;
}

v1::VmapPurgePrediction PredictVmapPurge(const v1::HostSnapshot& snapshot,
                                         const ModelOptions& options) {
  return PredictWithFeatures<v1::VmapPurgePrediction>(
      snapshot, options,
      [](const v1::HostSnapshot& s, const ModelOptions& o,
         const KernelFeatures& f,
         v1::VmapPurgePrediction* out) { PredictVmapPurge(s, o, f, out); });
}

void PredictVmapPurge(const v1::HostSnapshot& snapshot,
                      const ModelOptions& options,
                      const KernelFeatures& features,
                      v1::VmapPurgePrediction* out_ptr) {
  (void)options;
  ResetKeepingBasis(out_ptr);
  v1::VmapPurgePrediction& out = *out_ptr;
  const VmapCase k = MakeVmapCase(snapshot, features);
  if (!k.applies) {
    SetNotApplying(k.config_known, k.inputs, k.unknown_inputs, &out);
    return;
  }
  out.set_applies(true);
  const v1::VmallocState& vm = snapshot.vmalloc();
  // lazy_max_pages() = fls(cpus) · 32 MiB / PAGE_SIZE
  out.set_lazy_threshold_pages(LazyMaxPages(k.cpus, k.page_size));
  if (vm.has_unpurged_bytes())
    out.set_lazy_pages(vm.unpurged_bytes() / k.page_size);
  out.set_combined_flushes(k.combined);
  out.set_invlpgb(k.invlpgb);
  const uint64_t flushes = FlushesPerPurge(k, vm, out.lazy_threshold_pages());
  out.set_flushes_per_purge(flushes);
  // Per flush a + b · cpus (IPIs to every online CPU), or one invlpgb flush.
  const double per_flush = PerFlushSeconds(k.cpus, k.invlpgb, VmapConstants());
  out.set_per_flush_seconds(per_flush);
  out.set_purge_seconds(per_flush * static_cast<double>(flushes));

  // Nothing yields in the purge unless the kernel has the cond_resched fix.
  StallInput stall;
  stall.preempt_mode = snapshot.kernel().preempt_mode();
  stall.yields = k.cond_resched;
  stall.non_yielding_seconds = out.purge_seconds();
  stall.blocking_seconds = out.purge_seconds();
  const StallAssessment a =
      AssessStall(stall, snapshot.thresholds(), out.mutable_checks());
  v1::Risk risk = a.risk;
  // The purge runs in a kworker: nobody waits on it, so "latency" is not a
  // user-visible risk.
  if (risk == v1::RISK_LATENCY) risk = v1::RISK_NONE;
  if (k.flushes_from == FlushesFrom::kLazyThreshold &&
      risk >= v1::RISK_WARNING) {
    risk = v1::RISK_UNKNOWN;
  }
  out.set_risk(risk);
  out.mutable_basis()->set_confidence(
      Confidence(k.inputs.Defaults(), k.unknown_inputs));
}

}  // namespace tracehealth
