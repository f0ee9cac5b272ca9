#include "common/models/risk.h"

#include <algorithm>

namespace tracehealth {

Preemptibility PreemptibilityOf(v1::PreemptMode mode) {
  switch (mode) {
    case v1::PREEMPT_MODE_NONE:
    case v1::PREEMPT_MODE_VOLUNTARY:
      return Preemptibility::kNonPreemptible;
    case v1::PREEMPT_MODE_FULL:
    case v1::PREEMPT_MODE_LAZY:
    case v1::PREEMPT_MODE_RT:
      return Preemptibility::kPreemptible;
    default:
      return Preemptibility::kUnknown;
  }
}

double SoftLockupThresholdSeconds(const v1::Thresholds& thresholds) {
  double thresh = thresholds.has_watchdog_thresh_seconds()
                      ? thresholds.watchdog_thresh_seconds()
                      : kDefaultWatchdogThreshSeconds;
  return 2.0 * thresh;
}

double RcuStallThresholdSeconds(const v1::Thresholds& thresholds) {
  return thresholds.has_rcu_cpu_stall_timeout_seconds()
             ? thresholds.rcu_cpu_stall_timeout_seconds()
             : kDefaultRcuStallTimeoutSeconds;
}

namespace {

const v1::ThresholdCheck& AddCheck(
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks,
    v1::ThresholdCheck::Kind kind, double threshold, double predicted,
    bool applies, bool panics) {
  v1::ThresholdCheck* check = checks->Add();
  check->set_kind(kind);
  check->set_threshold(threshold);
  check->set_predicted(predicted);
  check->set_margin(threshold > 0 ? predicted / threshold : 0);
  check->set_applies(applies);
  check->set_panics(panics);
  return *check;
}

// The checks and the risk, for a soft-lockup and an RCU stretch, whether
// the checks apply, and whether the work could stall at all (an unknown
// preemption model: the checks are shown, the answer may be UNKNOWN).
struct CoreInput {
  double soft_seconds = 0;
  double rcu_seconds = 0;
  bool check_rcu = true;
  bool applies = false;
  bool could_stall = false;
  double blocking_seconds = 0;
  std::optional<double> latency_budget_seconds;
};

StallAssessment AssessCore(
    const CoreInput& input, const v1::Thresholds& thresholds,
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks) {
  StallAssessment out;
  const bool applies = input.applies;
  double worst_if_stalling = 0;
  auto stall_check = [&](v1::ThresholdCheck::Kind kind, double threshold,
                         double predicted, bool panics) {
    const v1::ThresholdCheck& check =
        AddCheck(checks, kind, threshold, predicted, applies, panics);
    if (input.could_stall)
      worst_if_stalling = std::max(worst_if_stalling, check.margin());
    if (applies) {
      out.worst_stall_margin = std::max(out.worst_stall_margin, check.margin());
      out.lowest_stall_threshold =
          out.lowest_stall_threshold
              ? std::min(*out.lowest_stall_threshold, threshold)
              : threshold;
    }
  };
  const double soft = SoftLockupThresholdSeconds(thresholds);
  if (soft > 0) {
    stall_check(v1::ThresholdCheck::KIND_SOFT_LOCKUP, soft, input.soft_seconds,
                thresholds.softlockup_panic());
  }
  const double rcu = RcuStallThresholdSeconds(thresholds);
  if (input.check_rcu && rcu > 0) {
    stall_check(v1::ThresholdCheck::KIND_RCU_STALL, rcu, input.rcu_seconds,
                thresholds.panic_on_rcu_stall());
  }
  bool over_budget = false;
  if (input.latency_budget_seconds && *input.latency_budget_seconds > 0) {
    const v1::ThresholdCheck& check = AddCheck(
        checks, v1::ThresholdCheck::KIND_LATENCY, *input.latency_budget_seconds,
        input.blocking_seconds, true, false);
    over_budget = check.margin() >= 1.0;
  }

  v1::Risk base = (over_budget || input.blocking_seconds >= kNoticeableSeconds)
                      ? v1::RISK_LATENCY
                      : v1::RISK_NONE;
  if (applies) {
    if (out.worst_stall_margin >= 1.0) {
      out.risk = v1::RISK_STALL;
    } else if (out.worst_stall_margin >= kWarningMargin) {
      out.risk = v1::RISK_WARNING;
    } else {
      out.risk = base;
    }
  } else if (input.could_stall && worst_if_stalling >= kWarningMargin) {
    // The preemption model is unknown and it matters.
    out.risk = v1::RISK_UNKNOWN;
  } else {
    out.risk = base;
  }
  return out;
}

}  // namespace

StallAssessment AssessStall(
    const StallInput& input, const v1::Thresholds& thresholds,
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks) {
  const Preemptibility preempt = PreemptibilityOf(input.preempt_mode);
  CoreInput core;
  core.soft_seconds = core.rcu_seconds = input.non_yielding_seconds;
  core.check_rcu = input.check_rcu;
  // Stall checks are evaluated as if non-preemptible when the mode is
  // unknown, so the caller can see what would happen; they "apply" only
  // when the kernel is known to be non-preemptible.
  core.could_stall = !input.yields && preempt != Preemptibility::kPreemptible;
  core.applies = !input.yields && preempt == Preemptibility::kNonPreemptible;
  core.blocking_seconds = input.blocking_seconds;
  core.latency_budget_seconds = input.latency_budget_seconds;
  return AssessCore(core, thresholds, checks);
}

v1::HungTaskRisk AssessHungTask(
    double held_seconds, const v1::Thresholds& thresholds,
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks) {
  if (!thresholds.has_hung_task_timeout_seconds()) {
    return v1::HUNG_TASK_RISK_UNKNOWN;
  }
  const double timeout = thresholds.hung_task_timeout_seconds();
  if (timeout <= 0) return v1::HUNG_TASK_RISK_OFF;
  const bool panics = thresholds.hung_task_panic();
  const v1::ThresholdCheck& check =
      AddCheck(checks, v1::ThresholdCheck::KIND_HUNG_TASK, timeout,
               held_seconds, /*applies=*/true, panics);
  if (check.margin() < 1.0) return v1::HUNG_TASK_RISK_NONE;
  return panics ? v1::HUNG_TASK_RISK_PANIC : v1::HUNG_TASK_RISK_REPORTED;
}

StallAssessment AssessStretches(
    const StretchInput& input, const v1::Thresholds& thresholds,
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks) {
  CoreInput core;
  core.soft_seconds = input.non_yielding_seconds;
  core.rcu_seconds = input.no_qs_seconds;
  core.applies = input.known;
  core.could_stall = true;
  core.blocking_seconds = input.blocking_seconds;
  core.latency_budget_seconds = input.latency_budget_seconds;
  return AssessCore(core, thresholds, checks);
}

}  // namespace tracehealth
