#include "common/models/vmap/vmap_purge.h"

#include <algorithm>
#include <string>

#include "common/models/basis.h"
#include "common/models/risk.h"
#include "common/models/vmap/kasan_shadow.h"

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

uint32_t VmapNodes(uint32_t possible_cpus, bool is_64bit) {
  if (!is_64bit) return 1;
  return std::clamp<uint32_t>(possible_cpus, 1, kMaxVmapNodes);
}

double PerFlushSeconds(uint32_t cpus, FlushKind kind, const VmapConstants& c) {
  switch (kind) {
    case FlushKind::kInvlpgb:
      return c.invlpgb_flush;
    case FlushKind::kBroadcastTlbi:
      return c.tlbi_flush;
    case FlushKind::kIpi:
      break;
  }
  return c.a + c.b * static_cast<double>(cpus);
}

namespace {

constexpr uint32_t kDefaultCpus = 64;

// uname -m names of 32-bit architectures (one vmap node).
bool Is32BitArch(const std::string& arch) {
  for (const char* a : {"i386", "i486", "i586", "i686", "armv6l", "armv7l",
                        "arm", "mips", "mipsel", "ppc", "riscv32", "parisc"}) {
    if (arch == a) return true;
  }
  return false;
}
constexpr uint32_t kDefaultPageSize = 4096;

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
    k->nodes = VmapNodes(k->possible_cpus, k->is_64bit);
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
  return lazy_threshold_pages / k.pages_per_shadow_page + 1;
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
  k.kasan_mode = KasanModeOf(kernel);
  k.pages_per_shadow_page = PagesPerShadowPage(k.kasan_mode);
  // Hardware tags keep no shadow: the purge frees and flushes none.
  k.applies =
      kernel.config_kasan_vmalloc() && k.kasan_mode != KasanMode::kHardwareTags;
  if (!k.applies) return k;

  const v1::CpuInfo& cpus = snapshot.cpus();
  const bool cpus_known = cpus.has_online() && cpus.online() > 0;
  k.cpus = cpus_known ? cpus.online() : kDefaultCpus;
  k.inputs.Add(VmapInput::kCpus, MeasuredIf(cpus_known));
  const bool possible_known = cpus.has_possible() && cpus.possible() > 0;
  k.possible_cpus = possible_known ? std::max(cpus.possible(), k.cpus) : k.cpus;
  const std::string arch =
      kernel.has_arch() ? NormalizeArch(kernel.arch()) : "";
  k.arm64 = arch == "aarch64";
  k.is_64bit = !Is32BitArch(arch);
  if (!arch.empty()) k.inputs.Add(VmapInput::kArch, v1::INPUT_SOURCE_MEASURED);
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
    k.purge_lock_resched = !features.vmap_node_purge_lists.present;
    k.uncertain_rows = features.kasan_flush_combined.uncertain +
                       features.kasan_purge_cond_resched.uncertain +
                       features.vmap_node_purge_lists.uncertain;
    if (features.invlpgb_kernel_flush.present) {
      k.uncertain_rows += features.invlpgb_kernel_flush.uncertain;
      const bool flag_known = snapshot.cpus().has_invlpgb();
      k.invlpgb = flag_known && snapshot.cpus().invlpgb();
      k.inputs.Add(VmapInput::kInvlpgb, MeasuredIf(flag_known));
    }
  } else {
    ++k.unknown_inputs;  // assumed not combined: the worst case
  }
  CountFlushes(vm, &k);
  if (k.flushes_from == FlushesFrom::kVmapNodes && !k.nodes_from_areas) {
    k.inputs.Add(VmapInput::kPossibleCpus, MeasuredIf(possible_known));
  }
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
  out.set_broadcast_tlbi(k.arm64);
  out.set_vmap_nodes(VmapNodes(k.possible_cpus, k.is_64bit));
  const uint64_t flushes = FlushesPerPurge(k, vm, out.lazy_threshold_pages());
  out.set_flushes_per_purge(flushes);
  // Per flush a + b · cpus (IPIs to every online CPU), or one broadcast.
  const FlushKind kind = k.invlpgb ? FlushKind::kInvlpgb
                         : k.arm64 ? FlushKind::kBroadcastTlbi
                                   : FlushKind::kIpi;
  const double per_flush = PerFlushSeconds(k.cpus, kind, VmapConstants());
  out.set_per_flush_seconds(per_flush);
  out.set_purge_seconds(per_flush * static_cast<double>(flushes));

  // The purge yields with the cond_resched fix, and before 6.9 between
  // areas once the backlog (lazy pages) is under twice the threshold; it
  // starts just over the threshold, so an unknown backlog is under.
  StallInput stall;
  stall.preempt_mode = snapshot.kernel().preempt_mode();
  double non_yielding = out.purge_seconds();
  if (k.purge_lock_resched) {
    const double twice = 2.0 * static_cast<double>(out.lazy_threshold_pages());
    const double backlog =
        out.has_lazy_pages() ? static_cast<double>(out.lazy_pages()) : 0;
    // Until the backlog falls under 2x, the areas purged do not yield.
    non_yielding =
        backlog > twice ? out.purge_seconds() * (backlog - twice) / backlog : 0;
  }
  stall.yields = k.cond_resched || non_yielding <= 0;
  out.set_yields(stall.yields);
  stall.non_yielding_seconds = non_yielding;
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
      Confidence(k.inputs.Defaults() + k.uncertain_rows, k.unknown_inputs));
}

}  // namespace tracehealth
