#include "common/models/stackdepot/stack_depot_explain.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/format.h"
#include "common/models/basis.h"
#include "common/models/stackdepot/stack_depot.h"
#include "common/models/stackdepot/trie/generated_workload.h"
#include "common/models/stackdepot/trie/pool_accounting.h"

namespace tracehealth {
namespace {

// "3.5 days", "2.0 h", "12 min", "40 s".
std::string Duration(double s) {
  if (s >= 86400) return absl::StrFormat("%.1f days", s / 86400);
  if (s >= 3600) return absl::StrFormat("%.1f h", s / 3600);
  if (s >= 60) return absl::StrFormat("%.0f min", s / 60);
  return absl::StrFormat("%.0f s", s);
}

void AddInputs(const v1::HostSnapshot& snapshot, const DepotCase& k,
               const v1::StackDepotPrediction& p, v1::Basis* basis) {
  const v1::KernelInfo& kernel = snapshot.kernel();
  for (const DepotInputs::Entry& e : k.inputs) {
    switch (e.id) {
      case DepotInput::kConfigStackdepot:
        AddInput(basis, "kernel.config_stackdepot",
                 kernel.config_stackdepot() ? "y" : "n", e.source);
        break;
      case DepotInput::kConfigKasan:
        AddInput(basis, "kernel.config_kasan",
                 kernel.config_kasan() ? "y" : "n", e.source);
        break;
      case DepotInput::kMaxFrames:
        if (e.source == v1::INPUT_SOURCE_NOT_APPLICABLE) {
          AddInput(basis, kMaxFramesInput, "none", e.source);
          const v1::NotApplicableInput* n =
              FindNotApplicable(snapshot, kMaxFramesInput);
          AddNote(basis,
                  absl::StrCat(n != nullptr ? n->reason() : "no such option",
                               "; records are sized to their traces, the "
                               "record size shown is for ",
                               k.max_frames, " frames"));
          break;
        }
        AddInput(basis, kMaxFramesInput, absl::StrCat(k.max_frames), e.source);
        break;
      case DepotInput::kPageSize:
        AddInput(basis, "kernel.page_size", absl::StrCat(k.page_size),
                 e.source);
        break;
      case DepotInput::kMaxPools:
        AddInput(basis, "stackdepot.max_pools", absl::StrCat(p.max_pools()),
                 e.source);
        break;
      case DepotInput::kPools:
        AddInput(basis, "stackdepot.pools", absl::StrCat(p.pools_used()),
                 e.source);
        break;
      case DepotInput::kLastSamplePools:
        AddInput(basis, "depot_history.last.pools",
                 absl::StrCat(p.pools_used()), e.source);
        break;
      case DepotInput::kHistory:
        AddInput(basis, "depot_history",
                 absl::StrCat(snapshot.depot_history_size(), " samples"),
                 e.source);
        break;
      case DepotInput::kPersistentBytes:
        AddInput(basis, "stackdepot.persistent_bytes",
                 absl::StrCat(p.trie().hash_bytes()), e.source);
        break;
    }
  }
}

void AddConstantsRowsAndNotes(const KernelFeatures& features,
                              const DepotCase& k, v1::Basis* basis) {
  AddConstant(basis, "pool_bytes", static_cast<double>(k.pool_bytes), "B",
              absl::StrCat("lib/stackdepot.c: DEPOT_POOL_ORDER 2, 4 pages of ",
                           k.page_size, " B"),
              v1::ANCHOR_PUBLISHED);
  AddConstant(basis, "pool_limit", static_cast<double>(k.pool_limit), "pools",
              "(1 << DEPOT_POOL_INDEX_BITS) - 1 for this page size; the "
              "default is min(limit, 8192)",
              v1::ANCHOR_PUBLISHED);
  if (k.max_pools_from == MaxPoolsFrom::kCmdline ||
      k.max_pools_from == MaxPoolsFrom::kCmdlineIgnored) {
    if (features.release)
      AddFeatureRow(basis, features.stackdepot_max_pools_param.row);
    AddNote(basis,
            k.max_pools_from == MaxPoolsFrom::kCmdline
                ? "max pools from stack_depot_max_pools= on the command line"
                : "stack_depot_max_pools= ignored before 6.17 (a fixed cap)");
  }
  if (!k.max_pools_refused.empty()) {
    absl::StrAppend(NewNote(basis), "refused by the kernel (kept as it was): ",
                    k.max_pools_refused);
  }
  if (k.page_size > 4096 && features.release &&
      !features.stackdepot_max_pools_param.present &&
      k.max_pools_from != MaxPoolsFrom::kStats) {
    AddNote(basis,
            "before 6.17 the cap with pages above 4 KiB depends on the "
            "handle layout (4,096 pools with 64 KiB pages in older trees); "
            "the release that changed it is not verified");
  }
  if (!k.pools)
    AddNote(basis, "stackdepot stats unknown (debugfs stats need 6.8+)");
  if (k.growth)
    AddNote(basis,
            absl::StrCat("growth: least-squares slope of pools over the "
                         "newest ",
                         kGrowthWindowSeconds / 60,
                         " minutes of the sample history, after the boot's "
                         "first ",
                         kBootSettleSeconds / 60, " minutes"));
  switch (k.trie_from) {
    case TrieFrom::kHostTraces:
      AddNote(basis,
              "trie bytes = this host's persistent bytes x the ratio the "
              "trie achieves on its page_owner stacks (page_owner's own, "
              "refcounted records stay in the hash)");
      return;
    case TrieFrom::kHostBytes:
    case TrieFrom::kGenerated:
      AddConstant(basis, "trie_ratio", GeneratedWorkloadEstimate().ratio, "1",
                  "real trie on the trie series' benchmark shape (32,768 x 32 "
                  "frames, 75% shared in groups of 64)",
                  v1::ANCHOR_FIT);
      AddNote(basis, k.trie_from == TrieFrom::kHostBytes
                         ? "trie bytes = this host's persistent bytes x the "
                           "generated-shape ratio"
                         : "trie figures are the generated workload's own "
                           "(persistent bytes unknown)");
      return;
  }
}

void WriteSummary(const DepotCase& k, const v1::StackDepotPrediction& p,
                  std::string* summary) {
  *summary = "Stack depot: ";
  if (p.has_pools_used()) {
    absl::StrAppend(summary, p.pools_used(), " of ", p.max_pools(), " pools (",
                    FormatFixed(100 * p.budget_ratio(), 0), "%)");
    if (p.has_seconds_to_exhaustion()) {
      absl::StrAppend(summary,
                      p.seconds_to_exhaustion() <= 0
                          ? ", full"
                          : absl::StrCat(", full in ",
                                         Duration(p.seconds_to_exhaustion())));
    } else if (k.growth) {
      absl::StrAppend(summary, ", not growing");
    }
  } else {
    absl::StrAppend(summary, "pool use unknown");
  }
  absl::StrAppend(summary, "; the trie backend would need ",
                  FormatFixed(100 * p.trie().ratio(), 0),
                  "% of the hash bytes");
  if (p.risk() == v1::RISK_STALL) {
    absl::StrAppend(
        summary, "; new traces lose their handle: raise stack_depot_max_pools");
  }
  absl::StrAppend(summary, ".");
}

}  // namespace

void ExplainStackDepot(const v1::HostSnapshot& snapshot,
                       const KernelFeatures& features,
                       v1::StackDepotPrediction* p) {
  ClearExplanation(p);
  const DepotCase k =
      MakeDepotCase(snapshot, features,
                    p->has_growth_pools_per_second()
                        ? std::optional<double>(p->growth_pools_per_second())
                        : std::nullopt);
  v1::Basis* basis = p->mutable_basis();
  AddInputs(snapshot, k, *p, basis);
  if (!k.applies) {
    if (k.any_config) {
      p->set_summary(
          "Stack depot: no persistent stack records on this kernel.");
    } else {
      AddNote(basis, "kernel config and stackdepot stats unknown");
      p->set_summary("Stack depot: kernel config and stats unknown.");
    }
    return;
  }
  AddConstantsRowsAndNotes(features, k, basis);
  WriteSummary(k, *p, p->mutable_summary());
}

}  // namespace tracehealth
