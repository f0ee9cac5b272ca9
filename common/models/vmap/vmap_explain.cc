#include "common/models/vmap/vmap_explain.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/enum_names.h"
#include "common/format.h"
#include "common/models/basis.h"
#include "common/models/vmap/vmap_purge.h"

namespace tracehealth {
namespace {

void AddInputs(const v1::HostSnapshot& snapshot, const VmapCase& k,
               v1::Basis* basis) {
  const v1::KernelInfo& kernel = snapshot.kernel();
  const v1::VmallocState& vm = snapshot.vmalloc();
  for (const VmapInputs::Entry& e : k.inputs) {
    switch (e.id) {
      case VmapInput::kConfigKasanVmalloc:
        AddInput(basis, "kernel.config_kasan_vmalloc",
                 kernel.config_kasan_vmalloc() ? "y" : "n", e.source);
        break;
      case VmapInput::kCpus:
        AddInput(basis, "cpus.online", absl::StrCat(k.cpus), e.source);
        break;
      case VmapInput::kPossibleCpus:
        AddInput(basis, "cpus.possible", absl::StrCat(k.possible_cpus),
                 e.source);
        break;
      case VmapInput::kArch:
        AddInput(basis, "kernel.arch", kernel.arch(), e.source);
        break;
      case VmapInput::kPageSize:
        AddInput(basis, "kernel.page_size", absl::StrCat(k.page_size),
                 e.source);
        break;
      case VmapInput::kUnpurgedBytes:
        AddInput(basis, "vmalloc.unpurged_bytes",
                 absl::StrCat(vm.unpurged_bytes()), e.source);
        break;
      case VmapInput::kRelease:
        AddInput(basis, "kernel.release", kernel.release(), e.source);
        break;
      case VmapInput::kInvlpgb:
        AddInput(basis, "cpus.invlpgb", k.invlpgb ? "true" : "false", e.source);
        break;
      case VmapInput::kShadowPageAreas:
        AddInput(basis, "vmalloc.unpurged_shadow_page_areas",
                 absl::StrCat(vm.unpurged_shadow_page_areas()), e.source);
        break;
      case VmapInput::kUnpurgedAreas:
        AddInput(basis, "vmalloc.unpurged_areas",
                 absl::StrCat(vm.unpurged_areas()), e.source);
        break;
      case VmapInput::kPreemptMode:
        AddInput(basis, "kernel.preempt_mode",
                 PreemptModeConfigName(kernel.preempt_mode()), e.source);
        break;
    }
  }
}

void AddRowsConstantsAndNotes(const KernelFeatures& features, const VmapCase& k,
                              v1::Basis* basis) {
  if (k.release_known) {
    AddFeatureRow(basis, features.kasan_flush_combined.row);
    AddFeatureRow(basis, features.kasan_purge_cond_resched.row);
    AddFeatureRow(basis, features.vmap_node_purge_lists.row);
    AddFeatureRow(basis, features.invlpgb_kernel_flush.row);
  } else {
    AddNote(
        basis,
        "kernel release unknown: assumed flushes not combined (worst case)");
  }
  switch (k.flushes_from) {
    case FlushesFrom::kVmapNodes:
      absl::StrAppend(
          NewNote(basis), "combined flushes: one per active vmap node (",
          k.nodes, ", ",
          k.nodes_from_areas
              ? "at most one node per pending area"
              : absl::StrCat("possible CPUs clamped to 1..", kMaxVmapNodes),
          "; every node active is the worst case) plus one");
      break;
    case FlushesFrom::kShadowPageAreas:
      break;
    case FlushesFrom::kAreas:
      AddNote(basis,
              "every pending area assumed to own a whole shadow page (upper "
              "bound)");
      break;
    case FlushesFrom::kLazyThreshold:
      AddNote(basis, absl::StrCat("pending areas unknown: worst case at the "
                                  "lazy threshold with ",
                                  k.pages_per_shadow_page,
                                  "-page areas (each owning one shadow page",
                                  k.kasan_mode == KasanMode::kSoftwareTags
                                      ? ": software tags, 1 shadow byte per "
                                        "16"
                                      : "",
                                  ")"));
      break;
  }
  const VmapConstants c;
  if (k.arm64) {
    AddConstant(basis, "tlbi_flush", c.tlbi_flush, "s",
                "model assumption: broadcast TLBI per page (vaale1is), no "
                "IPIs; cost follows the range, not the CPU count",
                v1::ANCHOR_ASSUMPTION);
  } else if (k.invlpgb) {
    AddConstant(basis, "invlpgb_flush", c.invlpgb_flush, "s",
                "model assumption: broadcast invlpgb + tlbsync, no IPIs",
                v1::ANCHOR_ASSUMPTION);
  } else {
    AddConstant(basis, "flush_a", c.a, "s",
                "model assumption: local flush and set-up",
                v1::ANCHOR_ASSUMPTION);
    AddConstant(basis, "flush_b", c.b, "s/cpu",
                "upper anchor from the combining commit's thread: 23.87 s / "
                "2,805 flushes on 256 CPUs (function_graph on, make -j)",
                v1::ANCHOR_PUBLISHED);
  }
  if (k.cond_resched) {
    AddNote(basis, "the purge reschedules every 32 areas: no lockup");
  } else if (k.purge_lock_resched) {
    AddNote(basis,
            "before 6.9 the purge loop runs cond_resched_lock() between "
            "areas once the backlog is under twice the lazy threshold");
  }
}

}  // namespace

void ExplainVmapPurge(const v1::HostSnapshot& snapshot,
                      const KernelFeatures& features,
                      v1::VmapPurgePrediction* p) {
  ClearExplanation(p);
  const VmapCase k = MakeVmapCase(snapshot, features);
  v1::Basis* basis = p->mutable_basis();
  AddInputs(snapshot, k, basis);
  if (!k.config_known) {
    AddNote(basis, "CONFIG_KASAN_VMALLOC unknown (kernel config unreadable)");
    p->set_summary(
        "KASAN vmalloc purge: kernel config unknown, cannot tell whether it "
        "applies.");
    return;
  }
  if (!k.applies) {
    p->set_summary(
        k.kasan_mode == KasanMode::kHardwareTags &&
                snapshot.kernel().config_kasan_vmalloc()
            ? "KASAN vmalloc purge: hardware tag-based KASAN keeps no shadow "
              "memory, nothing to flush."
            : "KASAN vmalloc purge: CONFIG_KASAN_VMALLOC is off, nothing to "
              "flush.");
    return;
  }
  AddRowsConstantsAndNotes(features, k, basis);
  const v1::Risk risk = p->risk();
  const char* verdict = risk == v1::RISK_STALL ? "soft lockup predicted"
                        : risk == v1::RISK_WARNING
                            ? "close to the soft-lockup threshold"
                        : risk == v1::RISK_UNKNOWN ? "risk unknown"
                                                   : "no lockup risk";
  absl::StrAppend(
      p->mutable_summary(), "KASAN vmalloc purge: ", p->flushes_per_purge(),
      " flushes x ", FormatFixed(p->per_flush_seconds() * 1e3, 2), " ms on ",
      k.cpus, " CPUs = ", FormatFixed(p->purge_seconds(), 2), " s per purge",
      p->combined_flushes() ? " (combined per vmap node)" : "", "; ", verdict,
      ".");
}

}  // namespace tracehealth
