#include "common/models/stackdepot/stack_depot.h"

#include <algorithm>
#include <cmath>

#include "common/models/basis.h"
#include "common/models/stackdepot/page_owner_stacks.h"
#include "common/models/stackdepot/trie/pool_accounting.h"

namespace tracehealth {

absl::StatusOr<v1::TrieMeasurement> MeasureShowStacks(
    absl::string_view show_stacks) {
  absl::StatusOr<std::vector<OwnerStack>> stacks =
      ParsePageOwnerStacks(show_stacks);
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
    const google::protobuf::RepeatedPtrField<v1::DepotSample>& history,
    std::optional<double> uptime_seconds) {
  const int n_all = history.size();
  if (n_all < 2) return std::nullopt;
  auto seconds = [](const v1::DepotSample& s) {
    return static_cast<double>(s.at().seconds()) + s.at().nanos() * 1e-9;
  };
  const double newest = seconds(history[n_all - 1]);
  // The first sample used: after the boot's settling, then within the
  // window, each while two remain.
  int first = 0;
  if (uptime_seconds) {
    const double settled = newest - *uptime_seconds + kBootSettleSeconds;
    while (first < n_all - 2 && seconds(history[first]) < settled) ++first;
  }
  while (first < n_all - 2 &&
         seconds(history[first]) < newest - kGrowthWindowSeconds) {
    ++first;
  }
  const double t0 = seconds(history[first]);
  const double n = static_cast<double>(n_all - first);
  double st = 0, sp = 0;
  for (int i = first; i < n_all; ++i) {
    st += seconds(history[i]) - t0;
    sp += static_cast<double>(history[i].pools());
  }
  const double mt = st / n, mp = sp / n;
  double num = 0, den = 0;
  for (int i = first; i < n_all; ++i) {
    const double dt = seconds(history[i]) - t0 - mt;
    num += dt * (static_cast<double>(history[i].pools()) - mp);
    den += dt * dt;
  }
  if (den <= 0) return std::nullopt;
  return num / den;
}

std::optional<double> DepotGrowthOf(const v1::HostSnapshot& snapshot) {
  return GrowthPoolsPerSecond(
      snapshot.depot_history(),
      snapshot.threads().has_uptime_seconds()
          ? std::optional<double>(snapshot.threads().uptime_seconds())
          : std::nullopt);
}

namespace {

v1::InputSource MeasuredIf(bool measured) {
  return measured ? v1::INPUT_SOURCE_MEASURED : v1::INPUT_SOURCE_DEFAULT;
}

bool On(bool has, bool value) { return has && value; }

// max_pools: the stats, else stack_depot_max_pools= as the kernel applies
// it (a parameter from 6.17; before, the pool count is capped whatever the
// command line says), else the default for the page size.
void DecideMaxPools(const v1::HostSnapshot& snapshot,
                    const KernelFeatures& features, DepotCase* k) {
  const v1::KernelInfo& kernel = snapshot.kernel();
  const v1::StackDepotStats& stats = snapshot.stackdepot();
  k->max_pools = DepotDefaultMaxPools(k->page_size);
  if (stats.has_max_pools() && stats.max_pools() > 0) {
    k->max_pools = stats.max_pools();
    k->max_pools_from = MaxPoolsFrom::kStats;
    k->inputs.Add(DepotInput::kMaxPools,
                  MeasuredIf(stats.max_pools_source() != "default"));
    return;
  }
  const std::optional<uint64_t> from_cmdline =
      kernel.has_cmdline()
          ? MaxPoolsFromCmdline(kernel.cmdline(), k->pool_limit,
                                &k->max_pools_refused)
          : std::nullopt;
  // (Before 6.17 the cap with pages above 4 KiB follows a handle layout
  // whose release is not verified, 4,096 pools with 64 KiB pages in older
  // trees; today's is taken, as the default.)
  const bool param =
      !features.release || features.stackdepot_max_pools_param.present;
  if (!from_cmdline) {
    k->inputs.Add(DepotInput::kMaxPools, v1::INPUT_SOURCE_DEFAULT);
    return;
  }
  if (features.release && features.stackdepot_max_pools_param.uncertain) {
    ++k->uncertain_rows;
  }
  if (param) k->max_pools = *from_cmdline;
  k->max_pools_from =
      param ? MaxPoolsFrom::kCmdline : MaxPoolsFrom::kCmdlineIgnored;
  k->inputs.Add(DepotInput::kMaxPools, v1::INPUT_SOURCE_DERIVED);
}

uint64_t Pools(uint64_t bytes, uint64_t pool_bytes) {
  return (bytes + pool_bytes - 1) / pool_bytes;
}

// What the trie backend would use for the persistent records: their bytes
// at the measured ratio (the host's own stacks, else the generated
// workload's), or the generated workload alone.
void EstimateTrie(const v1::HostSnapshot& snapshot, const DepotCase& k,
                  v1::TrieEstimate* trie) {
  const TrieComparison& generated = GeneratedWorkloadEstimate();
  if (k.trie_from == TrieFrom::kGenerated) {
    trie->set_source(v1::TrieEstimate::SOURCE_GENERATED);
    trie->set_ratio(generated.ratio);
    trie->set_records(generated.records);
    trie->set_hash_bytes(generated.hash_bytes);
    trie->set_hash_pools(generated.hash_pools);
    trie->set_trie_bytes(generated.trie_bytes);
    trie->set_trie_pools(generated.trie_pools);
    return;
  }
  double ratio = generated.ratio;
  trie->set_source(v1::TrieEstimate::SOURCE_GENERATED);
  if (k.trie_from == TrieFrom::kHostTraces) {
    const v1::TrieMeasurement& m = snapshot.trie();
    ratio = static_cast<double>(m.trie_bytes()) /
            static_cast<double>(m.hash_bytes());
    trie->set_source(v1::TrieEstimate::SOURCE_HOST_TRACES);
  }
  // trie bytes = the persistent records' bytes x the ratio
  const v1::StackDepotStats& stats = snapshot.stackdepot();
  const uint64_t hash_bytes = stats.persistent_bytes();
  const uint64_t trie_bytes = static_cast<uint64_t>(
      std::llround(static_cast<double>(hash_bytes) * ratio));
  trie->set_ratio(ratio);
  trie->set_records(stats.persistent_count());
  trie->set_hash_bytes(hash_bytes);
  trie->set_hash_pools(Pools(hash_bytes, k.pool_bytes));
  trie->set_trie_bytes(trie_bytes);
  trie->set_trie_pools(Pools(trie_bytes, k.pool_bytes));
}

// STALL when the pools are full or fill within an hour, WARNING above 80 %
// or within a week, NONE otherwise; UNKNOWN without a pool count.
v1::Risk PoolRisk(const v1::StackDepotPrediction& p) {
  if (!p.has_pools_used()) return v1::RISK_UNKNOWN;
  const double ratio = p.budget_ratio();
  const bool exhaustion = p.has_seconds_to_exhaustion();
  if (ratio >= 1.0 ||
      (exhaustion && p.seconds_to_exhaustion() <= kStallExhaustionSeconds)) {
    return v1::RISK_STALL;
  }
  if (ratio > kWarnBudgetRatio ||
      (exhaustion && p.seconds_to_exhaustion() <= kWarnExhaustionSeconds)) {
    return v1::RISK_WARNING;
  }
  return v1::RISK_NONE;
}

}  // namespace

DepotCase MakeDepotCase(const v1::HostSnapshot& snapshot,
                        const KernelFeatures& features,
                        std::optional<double> growth) {
  DepotCase k;
  const v1::KernelInfo& kernel = snapshot.kernel();
  const v1::StackDepotStats& stats = snapshot.stackdepot();
  // Does this host keep persistent stack records at all?
  k.any_config = kernel.has_config_stackdepot() || kernel.has_config_kasan() ||
                 kernel.has_config_page_owner();
  k.users = On(kernel.has_config_stackdepot(), kernel.config_stackdepot()) ||
            On(kernel.has_config_kasan(), kernel.config_kasan()) ||
            On(kernel.has_config_page_owner(), kernel.config_page_owner());
  k.applies = k.users || stats.has_pools() || !snapshot.depot_history().empty();
  if (kernel.has_config_stackdepot()) {
    k.inputs.Add(DepotInput::kConfigStackdepot, v1::INPUT_SOURCE_MEASURED);
  }
  if (kernel.has_config_kasan())
    k.inputs.Add(DepotInput::kConfigKasan, v1::INPUT_SOURCE_MEASURED);
  if (!k.applies) {
    if (!k.any_config) k.unknown_inputs = 1;
    return k;
  }
  const bool frames_known = kernel.has_config_stackdepot_max_frames() &&
                            kernel.config_stackdepot_max_frames() > 0;
  if (frames_known) k.max_frames = kernel.config_stackdepot_max_frames();
  // A kernel without the option (before 6.8) sizes each record to its
  // trace: nothing is assumed, the record size is the 64-frame one.
  k.inputs.Add(
      DepotInput::kMaxFrames,
      !frames_known && FindNotApplicable(snapshot, kMaxFramesInput) != nullptr
          ? v1::INPUT_SOURCE_NOT_APPLICABLE
          : MeasuredIf(frames_known));
  const bool page_known = kernel.has_page_size() && kernel.page_size() > 0;
  if (page_known) k.page_size = kernel.page_size();
  k.inputs.Add(DepotInput::kPageSize, MeasuredIf(page_known));
  k.pool_bytes = DepotPoolBytes(k.page_size);
  k.pool_limit = DepotPoolLimit(k.page_size);
  DecideMaxPools(snapshot, features, &k);
  if (stats.has_pools()) {
    k.pools = stats.pools();
    k.inputs.Add(DepotInput::kPools, v1::INPUT_SOURCE_MEASURED);
  } else if (!snapshot.depot_history().empty()) {
    k.pools = snapshot.depot_history().rbegin()->pools();
    k.inputs.Add(DepotInput::kLastSamplePools, v1::INPUT_SOURCE_MEASURED);
  } else {
    ++k.unknown_inputs;
  }
  k.growth = growth;
  if (k.growth) k.inputs.Add(DepotInput::kHistory, v1::INPUT_SOURCE_MEASURED);
  // The trie would hold the persistent records only.
  if (stats.has_persistent_bytes() && stats.persistent_bytes() > 0) {
    k.inputs.Add(DepotInput::kPersistentBytes, v1::INPUT_SOURCE_MEASURED);
    k.trie_from = snapshot.has_trie() && snapshot.trie().hash_bytes() > 0
                      ? TrieFrom::kHostTraces
                      : TrieFrom::kHostBytes;
  }
  return k;
}

v1::StackDepotPrediction PredictStackDepot(const v1::HostSnapshot& snapshot,
                                           const ModelOptions& options) {
  return PredictWithFeatures<v1::StackDepotPrediction>(
      snapshot, options,
      [](const v1::HostSnapshot& s, const ModelOptions& o,
         const KernelFeatures& f,
         v1::StackDepotPrediction* out) { PredictStackDepot(s, o, f, out); });
}

void PredictStackDepot(const v1::HostSnapshot& snapshot,
                       const ModelOptions& options,
                       const KernelFeatures& features,
                       v1::StackDepotPrediction* out_ptr) {
  (void)options;
  ResetKeepingBasis(out_ptr);
  v1::StackDepotPrediction& out = *out_ptr;
  const DepotCase k =
      MakeDepotCase(snapshot, features, DepotGrowthOf(snapshot));
  // A hash-backend record: ALIGN(32 + 8 · frames, 16).
  out.set_hash_record_bytes(
      static_cast<uint32_t>(HashRecordBytes(k.max_frames)));
  if (!k.applies) {
    SetNotApplying(k.any_config, k.inputs, k.unknown_inputs, &out);
    return;
  }
  out.set_applies(true);
  out.set_max_pools(k.max_pools);
  if (k.pools) {
    // budget = pools / max_pools
    out.set_pools_used(*k.pools);
    out.set_budget_ratio(static_cast<double>(*k.pools) /
                         static_cast<double>(k.max_pools));
  }
  if (k.growth) {
    out.set_growth_pools_per_second(*k.growth);
    // Time to exhaustion = (max_pools - pools) / growth; 0 once full.
    if (*k.growth > 0 && k.pools && *k.pools < k.max_pools) {
      out.set_seconds_to_exhaustion(
          static_cast<double>(k.max_pools - *k.pools) / *k.growth);
    } else if (*k.growth > 0 && k.pools) {
      out.set_seconds_to_exhaustion(0);
    }
  }
  out.set_pool_bytes(k.pool_bytes);
  EstimateTrie(snapshot, k, out.mutable_trie());
  if (k.pools) {
    v1::ThresholdCheck* check = out.add_checks();
    check->set_kind(v1::ThresholdCheck::KIND_POOL_BUDGET);
    check->set_threshold(static_cast<double>(k.max_pools));
    check->set_predicted(static_cast<double>(*k.pools));
    check->set_margin(out.budget_ratio());
    check->set_applies(true);
    check->set_panics(false);
  }
  out.set_risk(PoolRisk(out));
  out.mutable_basis()->set_confidence(
      Confidence(k.inputs.Defaults() + k.uncertain_rows, k.unknown_inputs));
}

}  // namespace tracehealth
