#include "common/models/vmap/vmap_purge.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/enum_names.h"
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

}  // namespace

v1::VmapPurgePrediction PredictVmapPurge(const v1::HostSnapshot& snapshot,
                                         const ModelOptions& options) {
  const KernelFeatures features = ResolveKernelFeatures(
      snapshot.kernel(),
      options.features != nullptr ? *options.features : FeatureTable::Builtin());
  v1::VmapPurgePrediction out;
  PredictVmapPurge(snapshot, options, features, &out);
  return out;
}

void PredictVmapPurge(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                      const KernelFeatures& features, v1::VmapPurgePrediction* out_ptr) {
  (void)options;
  ResetKeepingBasis(out_ptr);
  v1::VmapPurgePrediction& out = *out_ptr;
  v1::Basis* basis = out.mutable_basis();
  const v1::KernelInfo& kernel = snapshot.kernel();
  int unknown_inputs = 0;
  VmapConstants c;

  if (!kernel.has_config_kasan_vmalloc()) {
    out.set_applies(false);
    out.set_risk(v1::RISK_UNKNOWN);
    AddNote(basis, "CONFIG_KASAN_VMALLOC unknown (kernel config unreadable)");
    out.set_summary("KASAN vmalloc purge: kernel config unknown, cannot tell whether it applies.");
    SetConfidence(basis, 1);
    return;
  }
  AddInput(basis, "kernel.config_kasan_vmalloc",
           kernel.config_kasan_vmalloc() ? "y" : "n", v1::INPUT_SOURCE_MEASURED);
  if (!kernel.config_kasan_vmalloc()) {
    out.set_applies(false);
    out.set_risk(v1::RISK_NONE);
    out.set_summary("KASAN vmalloc purge: CONFIG_KASAN_VMALLOC is off, nothing to flush.");
    SetConfidence(basis);
    return;
  }
  out.set_applies(true);

  uint32_t cpus = kDefaultCpus;
  if (snapshot.cpus().has_online() && snapshot.cpus().online() > 0) {
    cpus = snapshot.cpus().online();
    AddInput(basis, "cpus.online", absl::StrCat(cpus), v1::INPUT_SOURCE_MEASURED);
  } else {
    AddInput(basis, "cpus.online", absl::StrCat(cpus), v1::INPUT_SOURCE_DEFAULT);
  }
  uint32_t page_size = kDefaultPageSize;
  if (kernel.has_page_size() && kernel.page_size() > 0) {
    page_size = kernel.page_size();
    AddInput(basis, "kernel.page_size", absl::StrCat(page_size), v1::INPUT_SOURCE_MEASURED);
  } else {
    AddInput(basis, "kernel.page_size", absl::StrCat(page_size), v1::INPUT_SOURCE_DEFAULT);
  }
  out.set_lazy_threshold_pages(LazyMaxPages(cpus, page_size));
  const v1::VmallocState& vm = snapshot.vmalloc();
  if (vm.has_unpurged_bytes()) {
    out.set_lazy_pages(vm.unpurged_bytes() / page_size);
    AddInput(basis, "vmalloc.unpurged_bytes", absl::StrCat(vm.unpurged_bytes()),
             v1::INPUT_SOURCE_MEASURED);
  }

  bool combined = false, cond_resched = false, invlpgb = false;
  if (features.release) {
    AddInput(basis, "kernel.release", kernel.release(), v1::INPUT_SOURCE_MEASURED);
    combined = features.kasan_flush_combined.present;
    AddFeatureRow(basis, features.kasan_flush_combined.row);
    cond_resched = features.kasan_purge_cond_resched.present;
    AddFeatureRow(basis, features.kasan_purge_cond_resched.row);
    AddFeatureRow(basis, features.invlpgb_kernel_flush.row);
    if (features.invlpgb_kernel_flush.present) {
      if (snapshot.cpus().has_invlpgb()) {
        invlpgb = snapshot.cpus().invlpgb();
        AddInput(basis, "cpus.invlpgb", invlpgb ? "true" : "false",
                 v1::INPUT_SOURCE_MEASURED);
      } else {
        AddInput(basis, "cpus.invlpgb", "false", v1::INPUT_SOURCE_DEFAULT);
      }
    }
  } else {
    ++unknown_inputs;
    AddNote(basis, "kernel release unknown: assumed flushes not combined (worst case)");
  }
  out.set_combined_flushes(combined);
  out.set_invlpgb(invlpgb);

  uint64_t flushes = 0;
  bool flushes_known = true;
  if (combined) {
    uint32_t nodes = VmapNodes(cpus);
    std::string how = absl::StrCat("min(cpus, ", kMaxVmapNodes, ")");
    if (vm.has_unpurged_areas() && vm.unpurged_areas() < nodes) {
      nodes = static_cast<uint32_t>(std::max<uint64_t>(vm.unpurged_areas(), 1));
      how = "at most one node per pending area";
    }
    flushes = static_cast<uint64_t>(nodes) + 1;
    absl::StrAppend(NewNote(basis), "combined flushes: one per active vmap node (", nodes, ", ",
                    how, "; every node active is the worst case) plus one");
  } else if (vm.has_unpurged_shadow_page_areas()) {
    flushes = vm.unpurged_shadow_page_areas() + 1;
    AddInput(basis, "vmalloc.unpurged_shadow_page_areas",
             absl::StrCat(vm.unpurged_shadow_page_areas()), v1::INPUT_SOURCE_MEASURED);
  } else if (vm.has_unpurged_areas()) {
    flushes = vm.unpurged_areas() + 1;
    AddInput(basis, "vmalloc.unpurged_areas", absl::StrCat(vm.unpurged_areas()),
             v1::INPUT_SOURCE_MEASURED);
    AddNote(basis, "every pending area assumed to own a whole shadow page (upper bound)");
  } else {
    flushes_known = false;
    ++unknown_inputs;
    flushes = out.lazy_threshold_pages() / kPagesPerShadowPage + 1;
    AddNote(basis, "pending areas unknown: worst case at the lazy threshold with "
                   "8-page areas (each owning one shadow page)");
  }
  out.set_flushes_per_purge(flushes);

  const double per_flush = PerFlushSeconds(cpus, invlpgb, c);
  if (invlpgb) {
    AddConstant(basis, "invlpgb_flush", c.invlpgb_flush, "s",
                "model assumption: broadcast invlpgb + tlbsync, no IPIs");
  } else {
    AddConstant(basis, "flush_a", c.a, "s", "model assumption: local flush and set-up");
    AddConstant(basis, "flush_b", c.b, "s/cpu",
                "seed 004 upper anchor: 23.87 s / 2,805 flushes on 256 CPUs "
                "(function_graph on, make -j)");
  }
  out.set_per_flush_seconds(per_flush);
  out.set_purge_seconds(per_flush * static_cast<double>(flushes));

  StallInput stall;
  stall.preempt_mode = kernel.preempt_mode();
  stall.yields = cond_resched;
  stall.non_yielding_seconds = out.purge_seconds();
  stall.blocking_seconds = out.purge_seconds();
  AddInput(basis, "kernel.preempt_mode", PreemptModeConfigName(kernel.preempt_mode()),
           kernel.preempt_mode() == v1::PREEMPT_MODE_UNKNOWN ? v1::INPUT_SOURCE_DEFAULT
                                                             : v1::INPUT_SOURCE_MEASURED);
  StallAssessment a = AssessStall(stall, snapshot.thresholds(), out.mutable_checks());
  v1::Risk risk = a.risk;
  // The purge runs in a kworker: nobody waits on it, so "latency" is not a
  // user-visible risk.
  if (risk == v1::RISK_LATENCY) risk = v1::RISK_NONE;
  if (!flushes_known && risk >= v1::RISK_WARNING) risk = v1::RISK_UNKNOWN;
  out.set_risk(risk);
  if (cond_resched) AddNote(basis, "the purge reschedules every 32 areas: no lockup");

  const char* verdict = risk == v1::RISK_STALL     ? "soft lockup predicted"
                        : risk == v1::RISK_WARNING ? "close to the soft-lockup threshold"
                        : risk == v1::RISK_UNKNOWN ? "risk unknown"
                                                   : "no lockup risk";
  absl::StrAppend(out.mutable_summary(), "KASAN vmalloc purge: ", flushes, " flushes x ",
                  FormatFixed(per_flush * 1e3, 2), " ms on ", cpus, " CPUs = ",
                  FormatFixed(out.purge_seconds(), 2), " s per purge",
                  combined ? " (combined per vmap node)" : "", "; ", verdict, ".");
  SetConfidence(basis, unknown_inputs);
}

}  // namespace tracehealth
