#include "common/models/stackdepot/stack_depot.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/models/basis.h"
#include "common/models/stackdepot/page_owner_stacks.h"
#include "common/models/stackdepot/pool_accounting.h"

namespace tracehealth {

absl::StatusOr<v1::TrieMeasurement> MeasureShowStacks(absl::string_view show_stacks) {
  absl::StatusOr<std::vector<OwnerStack>> stacks = ParsePageOwnerStacks(show_stacks);
  if (!stacks.ok()) return stacks.status();
  FrameAddressMap addresses;
  std::vector<std::vector<uint64_t>> traces;
  traces.reserve(stacks->size());
  uint64_t frames = 0;
  for (const OwnerStack& stack : *stacks) {
    traces.push_back(addresses.Addresses(stack.frames));
    frames += stack.frames.size();
  }
  const TrieComparison c = CompareTrieWithHash(traces);
  v1::TrieMeasurement m;
  m.set_traces(c.records);
  m.set_frames(frames);
  m.set_hash_bytes(c.hash_bytes);
  m.set_trie_bytes(c.trie_bytes);
  m.set_trie_pools(c.trie_pools);
  m.set_insert_failures(c.insert_failures);
  return m;
}

std::optional<double> GrowthPoolsPerSecond(
    const google::protobuf::RepeatedPtrField<v1::DepotSample>& history) {
  if (history.size() < 2) return std::nullopt;
  auto seconds = [](const v1::DepotSample& s) {
    return static_cast<double>(s.at().seconds()) + s.at().nanos() * 1e-9;
  };
  const double t0 = seconds(history[0]);
  double st = 0, sp = 0;
  for (const auto& s : history) {
    st += seconds(s) - t0;
    sp += static_cast<double>(s.pools());
  }
  const double n = static_cast<double>(history.size());
  const double mt = st / n, mp = sp / n;
  double num = 0, den = 0;
  for (const auto& s : history) {
    const double dt = seconds(s) - t0 - mt;
    num += dt * (static_cast<double>(s.pools()) - mp);
    den += dt * dt;
  }
  if (den <= 0) return std::nullopt;
  return num / den;
}

std::optional<uint64_t> MaxPoolsFromCmdline(absl::string_view cmdline) {
  std::optional<uint64_t> out;
  for (absl::string_view word : absl::StrSplit(cmdline, ' ', absl::SkipEmpty())) {
    constexpr absl::string_view kKey = "stack_depot_max_pools=";
    if (word.substr(0, kKey.size()) != kKey) continue;
    uint64_t value = 0;
    if (absl::SimpleAtoi(word.substr(kKey.size()), &value) && value > 0) out = value;
  }
  return out;  // the last occurrence wins, as for the kernel's parser
}

namespace {

std::string Duration(double s) {
  if (s >= 86400) return absl::StrFormat("%.1f days", s / 86400);
  if (s >= 3600) return absl::StrFormat("%.1f h", s / 3600);
  if (s >= 60) return absl::StrFormat("%.0f min", s / 60);
  return absl::StrFormat("%.0f s", s);
}

}  // namespace

v1::StackDepotPrediction PredictStackDepot(const v1::HostSnapshot& snapshot,
                                           const ModelOptions& options) {
  const KernelFeatures features = ResolveKernelFeatures(
      snapshot.kernel(),
      options.features != nullptr ? *options.features : FeatureTable::Builtin());
  v1::StackDepotPrediction out;
  PredictStackDepot(snapshot, options, features, &out);
  return out;
}

void PredictStackDepot(const v1::HostSnapshot& snapshot, const ModelOptions& options,
                       const KernelFeatures& features, v1::StackDepotPrediction* out_ptr) {
  (void)options;
  ResetKeepingBasis(out_ptr);
  v1::StackDepotPrediction& out = *out_ptr;
  v1::Basis* basis = out.mutable_basis();
  const v1::KernelInfo& kernel = snapshot.kernel();
  const v1::StackDepotStats& stats = snapshot.stackdepot();
  int unknown_inputs = 0;

  // Does this host keep persistent stack records at all?
  const bool any_config = kernel.has_config_stackdepot() || kernel.has_config_kasan() ||
                          kernel.has_config_page_owner();
  const bool users = (kernel.has_config_stackdepot() && kernel.config_stackdepot()) ||
                     (kernel.has_config_kasan() && kernel.config_kasan()) ||
                     (kernel.has_config_page_owner() && kernel.config_page_owner());
  const bool have_counts = stats.has_pools() || !snapshot.depot_history().empty();
  if (kernel.has_config_stackdepot()) {
    AddInput(basis, "kernel.config_stackdepot", kernel.config_stackdepot() ? "y" : "n",
             v1::INPUT_SOURCE_MEASURED);
  }
  if (kernel.has_config_kasan()) {
    AddInput(basis, "kernel.config_kasan", kernel.config_kasan() ? "y" : "n",
             v1::INPUT_SOURCE_MEASURED);
  }
  if (!users && !have_counts) {
    out.set_applies(false);
    out.set_hash_record_bytes(HashRecordBytes(kDefaultStackdepotMaxFrames));
    if (any_config) {
      out.set_risk(v1::RISK_NONE);
      out.set_summary("Stack depot: no persistent stack records on this kernel.");
      SetConfidence(basis);
    } else {
      out.set_risk(v1::RISK_UNKNOWN);
      AddNote(basis, "kernel config and stackdepot stats unknown");
      out.set_summary("Stack depot: kernel config and stats unknown.");
      SetConfidence(basis, 1);
    }
    return;
  }
  out.set_applies(true);

  uint32_t max_frames = kDefaultStackdepotMaxFrames;
  if (kernel.has_config_stackdepot_max_frames() && kernel.config_stackdepot_max_frames() > 0) {
    max_frames = kernel.config_stackdepot_max_frames();
    AddInput(basis, "kernel.config_stackdepot_max_frames", absl::StrCat(max_frames),
             v1::INPUT_SOURCE_MEASURED);
  } else {
    AddInput(basis, "kernel.config_stackdepot_max_frames", absl::StrCat(max_frames),
             v1::INPUT_SOURCE_DEFAULT);
  }
  out.set_hash_record_bytes(static_cast<uint32_t>(HashRecordBytes(max_frames)));
  AddConstant(basis, "pool_bytes", kDepotPoolBytes, "B", "DEPOT_POOL_ORDER 2, 4 KiB pages");

  // Pool budget.
  uint64_t max_pools = kDepotDefaultMaxPools;
  if (stats.has_max_pools() && stats.max_pools() > 0) {
    max_pools = stats.max_pools();
    AddInput(basis, "stackdepot.max_pools", absl::StrCat(max_pools),
             stats.max_pools_source() == "default" ? v1::INPUT_SOURCE_DEFAULT
                                                   : v1::INPUT_SOURCE_MEASURED);
  } else if (std::optional<uint64_t> from_cmdline =
                 kernel.has_cmdline() ? MaxPoolsFromCmdline(kernel.cmdline()) : std::nullopt) {
    // The parameter exists from 6.17; before, the pool count is capped at
    // 8192 whatever the command line says.
    const bool honoured = !features.release || features.stackdepot_max_pools_param.present;
    if (features.release) AddFeatureRow(basis, features.stackdepot_max_pools_param.row);
    max_pools = honoured ? *from_cmdline : kDepotDefaultMaxPools;
    AddInput(basis, "stackdepot.max_pools", absl::StrCat(max_pools), v1::INPUT_SOURCE_DERIVED);
    AddNote(basis, honoured ? "max pools from stack_depot_max_pools= on the command line"
                            : "stack_depot_max_pools= ignored before 6.17 (cap 8192)");
  } else {
    AddInput(basis, "stackdepot.max_pools", absl::StrCat(max_pools), v1::INPUT_SOURCE_DEFAULT);
  }
  out.set_max_pools(max_pools);

  std::optional<uint64_t> pools;
  if (stats.has_pools()) {
    pools = stats.pools();
    AddInput(basis, "stackdepot.pools", absl::StrCat(*pools), v1::INPUT_SOURCE_MEASURED);
  } else if (!snapshot.depot_history().empty()) {
    pools = snapshot.depot_history().rbegin()->pools();
    AddInput(basis, "depot_history.last.pools", absl::StrCat(*pools), v1::INPUT_SOURCE_MEASURED);
  } else {
    ++unknown_inputs;
    AddNote(basis, "stackdepot stats unknown (debugfs stats need 6.8+)");
  }
  if (pools) {
    out.set_pools_used(*pools);
    out.set_budget_ratio(static_cast<double>(*pools) / static_cast<double>(max_pools));
  }

  std::optional<double> growth = GrowthPoolsPerSecond(snapshot.depot_history());
  if (growth) {
    out.set_growth_pools_per_second(*growth);
    AddInput(basis, "depot_history", absl::StrCat(snapshot.depot_history_size(), " samples"),
             v1::INPUT_SOURCE_MEASURED);
    AddNote(basis, "growth: least-squares slope of pools over the sample history");
    if (*growth > 0 && pools && *pools < max_pools) {
      out.set_seconds_to_exhaustion(static_cast<double>(max_pools - *pools) / *growth);
    } else if (*growth > 0 && pools) {
      out.set_seconds_to_exhaustion(0);
    }
  }

  // Trie backend estimate.
  v1::TrieEstimate* trie = out.mutable_trie();
  if (snapshot.has_trie() && snapshot.trie().hash_bytes() > 0) {
    const v1::TrieMeasurement& m = snapshot.trie();
    trie->set_source(v1::TrieEstimate::SOURCE_HOST_TRACES);
    trie->set_records(m.traces());
    trie->set_hash_bytes(m.hash_bytes());
    trie->set_hash_pools((m.hash_bytes() + kDepotPoolBytes - 1) / kDepotPoolBytes);
    trie->set_trie_bytes(m.trie_bytes());
    trie->set_trie_pools(m.trie_pools());
    trie->set_ratio(static_cast<double>(m.trie_bytes()) / static_cast<double>(m.hash_bytes()));
    AddNote(basis, "trie measured on this host's page_owner stacks");
  } else {
    const TrieComparison& generated = GeneratedWorkloadEstimate();
    trie->set_source(v1::TrieEstimate::SOURCE_GENERATED);
    trie->set_ratio(generated.ratio);
    AddConstant(basis, "trie_ratio", generated.ratio, "1",
                "real trie on the seed 003 benchmark shape (32,768 x 32 frames, "
                "75% shared in groups of 64)");
    if (stats.has_persistent_bytes() && stats.persistent_bytes() > 0) {
      const uint64_t hash_bytes = stats.persistent_bytes();
      const uint64_t trie_bytes =
          static_cast<uint64_t>(std::llround(static_cast<double>(hash_bytes) * generated.ratio));
      trie->set_records(stats.persistent_count());
      trie->set_hash_bytes(hash_bytes);
      trie->set_hash_pools((hash_bytes + kDepotPoolBytes - 1) / kDepotPoolBytes);
      trie->set_trie_bytes(trie_bytes);
      trie->set_trie_pools((trie_bytes + kDepotPoolBytes - 1) / kDepotPoolBytes);
      AddInput(basis, "stackdepot.persistent_bytes", absl::StrCat(hash_bytes),
               v1::INPUT_SOURCE_MEASURED);
      AddNote(basis, "trie bytes = this host's persistent bytes x the generated-shape ratio");
    } else {
      trie->set_records(generated.records);
      trie->set_hash_bytes(generated.hash_bytes);
      trie->set_hash_pools(generated.hash_pools);
      trie->set_trie_bytes(generated.trie_bytes);
      trie->set_trie_pools(generated.trie_pools);
      AddNote(basis, "trie figures are the generated workload's own (host bytes unknown)");
    }
  }

  // Risk.
  if (pools) {
    v1::ThresholdCheck* check = out.add_checks();
    check->set_kind(v1::ThresholdCheck::KIND_POOL_BUDGET);
    check->set_threshold(static_cast<double>(max_pools));
    check->set_predicted(static_cast<double>(*pools));
    check->set_margin(out.budget_ratio());
    check->set_applies(true);
    check->set_panics(false);
  }
  v1::Risk risk = v1::RISK_UNKNOWN;
  if (pools) {
    const double ratio = out.budget_ratio();
    const bool exhaustion = out.has_seconds_to_exhaustion();
    if (ratio >= 1.0 || (exhaustion && out.seconds_to_exhaustion() <= kStallExhaustionSeconds)) {
      risk = v1::RISK_STALL;
    } else if (ratio > kWarnBudgetRatio ||
               (exhaustion && out.seconds_to_exhaustion() <= kWarnExhaustionSeconds)) {
      risk = v1::RISK_WARNING;
    } else {
      risk = v1::RISK_NONE;
    }
  }
  out.set_risk(risk);

  std::string& summary = *out.mutable_summary();
  summary = "Stack depot: ";
  if (pools) {
    absl::StrAppend(&summary, *pools, " of ", max_pools, " pools (",
                    FormatFixed(100 * out.budget_ratio(), 0), "%)");
    if (out.has_seconds_to_exhaustion()) {
      absl::StrAppend(&summary, out.seconds_to_exhaustion() <= 0
                                    ? ", full"
                                    : absl::StrCat(", full in ",
                                                   Duration(out.seconds_to_exhaustion())));
    } else if (growth) {
      absl::StrAppend(&summary, ", not growing");
    }
  } else {
    absl::StrAppend(&summary, "pool use unknown");
  }
  absl::StrAppend(&summary, "; the trie backend would need ",
                  FormatFixed(100 * trie->ratio(), 0), "% of the hash bytes");
  if (risk == v1::RISK_STALL) {
    absl::StrAppend(&summary, "; new traces lose their handle: raise stack_depot_max_pools");
  }
  absl::StrAppend(&summary, ".");
  SetConfidence(basis, unknown_inputs);
}

}  // namespace tracehealth
