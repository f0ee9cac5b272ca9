// Threshold checks shared by the models: kernel work checked against the
// soft-lockup watchdog (2 * watchdog_thresh) and the RCU CPU stall timeout,
// and optionally an operator latency budget. Two ways in:
// - AssessStall: work without reschedule points of its own (the vmap
//   purge): the whole section counts on non-preemptible kernels
//   (PREEMPT_NONE / PREEMPT_VOLUNTARY); on preemptible ones (FULL, LAZY,
//   RT) it is latency only.
// - AssessStretches: the caller has worked out, for the kernel's
//   preemption model, the longest stretch without a reschedule point and
//   the longest without an RCU quiescent state (the fgraph walk).
//
// Margin = predicted / threshold. RISK_STALL when an applicable check has
// margin >= 1, RISK_WARNING when >= 0.5, RISK_LATENCY when the caller blocks
// for at least kNoticeableSeconds (or crosses the latency budget), else
// RISK_NONE. Unknown preemption mode: RISK_UNKNOWN when a non-preemptible
// kernel would be at WARNING or worse, otherwise the answer is the same
// either way and is given.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_RISK_H_
#define TRACEHEALTH_COMMON_MODELS_RISK_H_

#include <optional>

#include "google/protobuf/repeated_ptr_field.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Kernel defaults: watchdog_thresh 10 s (soft lockup after 2x), RCU CPU stall
// timeout 21 s.
inline constexpr double kDefaultWatchdogThreshSeconds = 10.0;
inline constexpr double kDefaultRcuStallTimeoutSeconds = 21.0;
// A caller blocked at least this long is reported as RISK_LATENCY.
inline constexpr double kNoticeableSeconds = 0.1;
// Margin from which an applicable stall check is RISK_WARNING.
inline constexpr double kWarningMargin = 0.5;

enum class Preemptibility { kNonPreemptible, kPreemptible, kUnknown };

Preemptibility PreemptibilityOf(v1::PreemptMode mode);

struct StallInput {
  // Seconds the work runs without a reschedule point (checked against the
  // watchdog and RCU thresholds).
  double non_yielding_seconds = 0;
  // Seconds the caller blocks in total (checked against the latency budget
  // and kNoticeableSeconds).
  double blocking_seconds = 0;
  v1::PreemptMode preempt_mode = v1::PREEMPT_MODE_UNKNOWN;
  // The work reaches a reschedule point often enough that neither watchdog
  // can fire, whatever the preemption mode (e.g. cond_resched in the loop).
  bool yields = false;
  // Whether the RCU stall check applies (work inside an RCU read-side
  // section, or with preemption disabled).
  bool check_rcu = true;
  std::optional<double> latency_budget_seconds;
};

struct StallAssessment {
  v1::Risk risk = v1::RISK_UNKNOWN;
  // Worst applicable margin over the stall checks (0 when none applies).
  double worst_stall_margin = 0;
  // Lowest applicable stall threshold in seconds (unset when none applies).
  std::optional<double> lowest_stall_threshold;
};

// Appends the checks for `input` to `checks` (soft lockup, RCU stall when
// input.check_rcu, latency budget when given) using `thresholds` (unset
// values take the kernel defaults; watchdog_thresh 0 disables the
// soft-lockup check) and returns the risk.
StallAssessment AssessStall(
    const StallInput& input, const v1::Thresholds& thresholds,
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks);

struct StretchInput {
  // Longest stretch without a reschedule point (soft-lockup check).
  double non_yielding_seconds = 0;
  // Longest stretch without an RCU quiescent state (RCU stall check).
  double no_qs_seconds = 0;
  // Seconds the caller blocks in total.
  double blocking_seconds = 0;
  // The preemption model the stretches were worked out for is known. When
  // not, they are the worst case: the checks are shown but do not apply,
  // and the risk is RISK_UNKNOWN where they would make it WARNING or worse.
  bool known = true;
  std::optional<double> latency_budget_seconds;
};

// Appends the soft-lockup, RCU stall and (when given) latency checks for
// `input` and returns the risk, as AssessStall does.
StallAssessment AssessStretches(
    const StretchInput& input, const v1::Thresholds& thresholds,
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks);

// The hung-task detector against work that holds a mutex for
// `held_seconds` (the fgraph attach's ftrace_lock): every
// hung_task_timeout_secs khungtaskd reports each task in uninterruptible
// sleep that has not been scheduled since its previous look, and panics on
// it when hung_task_panic is set (kernel/hung_task.c). A waiter blocked
// for the timeout can be reported (it is for twice the timeout), so a hold
// at or over the timeout is a risk, whatever the preemption model: the
// waiters sleep, the holder need not stall. Appends a KIND_HUNG_TASK check
// (threshold: the timeout; applies: always; panics: hung_task_panic) when
// the timeout was read and is not 0. Returns HUNG_TASK_RISK_UNKNOWN when it
// was not read (no check, no risk claimed), OFF when it is 0, else NONE,
// REPORTED or PANIC. It does not change the stall risk (AssessStall,
// AssessStretches): nothing waits unless something else takes the lock.
v1::HungTaskRisk AssessHungTask(
    double held_seconds, const v1::Thresholds& thresholds,
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks);

// Soft-lockup threshold 2 * watchdog_thresh in seconds (0: disabled).
double SoftLockupThresholdSeconds(const v1::Thresholds& thresholds);
double RcuStallThresholdSeconds(const v1::Thresholds& thresholds);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_RISK_H_
