// HostRecord: what the server keeps in memory of a host's newest report:
// the inputs of the attach model (so fleet-wide what-ifs re-run it without
// the report), the numbers of the stored predictions that queries, metrics
// and rankings read, and the report's bookkeeping. About 1.5 kB a host
// where the parsed report took 12 kB; the report itself stays in the store
// (ReportStore::GetReport) for GetHost and for explanations. Only the
// attach model is re-run from records; the stack depot and vmap purge
// numbers are the stored predictions'.
//
// Built from a parsed report (MakeHostRecord). Which snapshot fields the
// attach model reads is fixed by AttachModelInputs: the kernel's identity
// (release, version, upstream version, architecture: what its features are
// resolved from), preemption (mode, PREEMPT_DYNAMIC, PREEMPT_RCU), page
// size, configs, threads, fgraph state, filter counts, thresholds and the
// CPU (model name, hypervisor, online and possible counts), and IBT.
// attach_evaluator_test and tests/server/record_predictions_test (every fixture
// host) check that a prediction from them equals one from the whole snapshot.
//
// Thread safety: plain values; the shared feature table is immutable.
#ifndef TRACEHEALTH_SERVER_INDEX_HOST_RECORD_H_
#define TRACEHEALTH_SERVER_INDEX_HOST_RECORD_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/kernel/feature_table.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"
#include "server/index/kernel_identity.h"
#include "server/index/label_set.h"

namespace tracehealth::server {

// The snapshot fields the attach model (common/models/fgraph) reads, each
// with whether the agent knew it: the strings in a shared KernelIdentity,
// the numbers and flags here.
struct AttachModelInputs {
  // Never null.
  std::shared_ptr<const KernelIdentity> identity = KernelIdentity::Empty();
  uint64_t threads_total = 0;
  uint64_t null_threads_bound = 0;
  uint64_t available_filter_functions = 0;
  uint64_t ftrace_filter_functions = 0;
  uint32_t page_size = 0;
  uint32_t watchdog_thresh_seconds = 0;
  uint32_t rcu_cpu_stall_timeout_seconds = 0;
  uint32_t hung_task_timeout_seconds = 0;
  uint32_t online_cpus = 0;
  uint32_t possible_cpus = 0;
  // cpus.l3_cache_bytes (the seed's visit levels); 0: not known.
  uint32_t l3_cache_bytes = 0;
  v1::PreemptMode preempt_mode = v1::PREEMPT_MODE_UNKNOWN;
  // Presence and value bits (kHas*: the field is set; the others: its value).
  uint32_t bits = 0;

  enum Bit : uint32_t {
    kHasOnlineCpus = 1u << 16,
    kHasPossibleCpus = 1u << 17,
    kHasConfigGraph = 1u << 1,
    kConfigGraph = 1u << 2,
    kHasConfigFprobe = 1u << 3,
    kConfigFprobe = 1u << 4,
    kHasThreads = 1u << 5,
    kHasFgraphActive = 1u << 6,
    kFgraphActive = 1u << 7,
    kHasNullBound = 1u << 8,
    kHasFilterFunctions = 1u << 9,
    kHasWatchdogThresh = 1u << 10,
    kHasSoftlockupPanic = 1u << 11,
    kSoftlockupPanic = 1u << 12,
    kHasRcuTimeout = 1u << 13,
    kHasPanicOnRcuStall = 1u << 14,
    kPanicOnRcuStall = 1u << 15,
    kHasPreemptDynamic = 1u << 19,
    kPreemptDynamic = 1u << 20,
    kHasPageSize = 1u << 21,
    kHasPreemptRcu = 1u << 22,
    kPreemptRcu = 1u << 23,
    kHasFtraceFilter = 1u << 24,
    kHasHypervisor = 1u << 26,
    kHypervisor = 1u << 27,
    kHasHungTaskTimeout = 1u << 28,
    kHasHungTaskPanic = 1u << 29,
    kHungTaskPanic = 1u << 30,
    // IBT as the attach model decides it (fgraph_kernel.h KernelIbtOf, from
    // the config, the CPU's flag and the command line): Fill writes inputs
    // that decide the same.
    kIbtKnown = 1u << 18,
    kIbtOn = 1u << 25,
  };
  bool has(Bit b) const { return (bits & b) != 0; }
  // The kernel release ("" when unknown: see has_release).
  const std::string& release() const { return identity->release; }
  bool has_release() const { return identity->has(KernelIdentity::kRelease); }

  // The inputs of `snapshot`, its identity shared through `identities` when
  // given.
  static AttachModelInputs Of(const v1::HostSnapshot& snapshot,
                              KernelIdentityCache* identities = nullptr);
  // Writes these fields into `*snapshot` (setting or clearing each), leaving
  // its other fields as they are. A snapshot only ever filled by Fill holds
  // exactly these inputs; refilling reuses its memory.
  void Fill(v1::HostSnapshot* snapshot) const;
  // Fill without the identity's strings: for a snapshot that holds them.
  void FillNumbers(v1::HostSnapshot* snapshot) const;
};

// Index of a threshold check kind among StoredAttach::margins.
enum StoredCheck : int { kSoftLockup = 0, kRcuStall = 1, kLatencyBudget = 2 };
inline constexpr int kStoredChecks = 3;

// One probe kind's stored attach prediction.
struct StoredAttach {
  double latency_seconds = 0;
  // Margins of the checks that apply (bit i of `applies` for margins[i]).
  std::array<double, kStoredChecks> margins{};
  uint8_t applies = 0;
  v1::Risk risk = v1::RISK_UNKNOWN;
  bool present = false;  // the report carried this kind

  std::optional<double> margin(StoredCheck c) const {
    if ((applies & (1u << c)) == 0) return std::nullopt;
    return margins[c];
  }
};

// Probe kinds PROBE_KIND_FUNCTION_GRAPH_TRACER .. PROBE_KIND_FENTRY_FEXIT.
inline constexpr int kProbeKinds = v1::PROBE_KIND_FENTRY_FEXIT;

struct HostRecord {
  // What a fleet-wide scan reads of every host comes first: the model's
  // inputs, the feature table, the labels, and whether the stored
  // predictions are current (HostIndex prefetches the first
  // HostIndex::kScanBytes of an entry ahead of a scan).
  AttachModelInputs inputs;
  // The feature table the agent used: its override rows (shared by every
  // host with the same override); null: the built-in table.
  std::shared_ptr<const FeatureTable> features;
  // The calibrated constants the predictions use (the host's own, or its
  // class's: server/calibration/calibrated_report.h); null: the seed
  // default. Read by every re-run: among the bytes a scan prefetches.
  std::shared_ptr<const CalibratedConstants> calibration;
  LabelSet labels;
  // The report's model_version is this server's kModelVersion: its
  // predictions are what the models give now.
  bool current_model = false;
  bool has_observed_at = false;
  int32_t observed_at_nanos = 0;
  int64_t observed_at_seconds = 0;
  uint64_t seq = 0;
  double interval_seconds = 0;
  uint64_t spool_dropped_total = 0;

  v1::Risk worst_risk = v1::RISK_UNKNOWN;
  // The largest margin over every check that applies, of every prediction.
  std::optional<double> worst_margin;
  std::array<StoredAttach, kProbeKinds> attach;
  std::optional<double> pool_budget_ratio;
  std::optional<double> seconds_to_exhaustion;
  v1::Risk stack_depot_risk = v1::RISK_UNKNOWN;
  bool vmap_applies = false;
  double purge_seconds = 0;
  std::optional<double> purge_lockup_margin;
  v1::Risk vmap_risk = v1::RISK_UNKNOWN;

  // The stored prediction of `kind`, or null when the report has none.
  const StoredAttach* Attach(v1::ProbeKind kind) const;
  bool has_release() const { return inputs.has_release(); }
  std::optional<uint64_t> threads() const {
    if (!inputs.has(AttachModelInputs::kHasThreads)) return std::nullopt;
    return inputs.threads_total;
  }
};

// Interns the feature tables of overrides, so hosts with the same override
// share one parsed table (held as long as a record uses it).
//
// Thread safety: Get may be called from any thread.
class FeatureTableCache {
 public:
  // The table of `report`'s override; nullptr without one, or for rows that
  // do not parse (ingest refuses those; only an altered store has them).
  std::shared_ptr<const FeatureTable> Get(const v1::HostReport& report);
  // The same for an override itself (a stored record's).
  std::shared_ptr<const FeatureTable> Get(
      const v1::FeatureTableOverride& override_table);

 private:
  absl::Mutex mu_;
  // Keyed by the serialized override.
  absl::flat_hash_map<std::string, std::weak_ptr<const FeatureTable>> tables_
      ABSL_GUARDED_BY(mu_);
  size_t purge_at_ ABSL_GUARDED_BY(mu_) = 16;
};

// The largest margin over the threshold checks that apply, of every attach
// prediction, the stack depot and the vmap purge; nullopt when none applies.
std::optional<double> WorstMargin(const v1::Predictions& p);

// The record of `report` (its first prediction of a probe kind counts when
// it carries several); its identity shared through `identities` when given.
HostRecord MakeHostRecord(const v1::HostReport& report,
                          FeatureTableCache& tables,
                          KernelIdentityCache* identities = nullptr);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_HOST_RECORD_H_
