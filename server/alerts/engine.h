// The alert state machine: each (rule, host) moves pending -> firing ->
// resolved, like Prometheus' alerting rules.
//
// - A condition that starts matching makes the alert PENDING (active_since =
//   now); once it has matched for the rule's `for` duration it is FIRING
//   (fired_at). `for: 0s` fires at once.
// - A pending alert whose condition stops matching is dropped (never
//   notified), so a condition flapping faster than `for` never fires; the
//   change is reported with state ALERT_STATE_UNSPECIFIED so that the stored
//   pending alert is removed too.
// - A firing alert whose condition stops matching is RESOLVED (resolved_at);
//   resolved alerts are kept for `keep_resolved`, then forgotten.
// - Report conditions are evaluated when a host reports (OnReport); silence
//   conditions (host.silent_*) and `for` timers advance on Tick.
// Every call returns the alerts whose state changed, for the caller to store
// and notify; Restore() loads stored state after a restart without reporting
// any change (so nothing is re-notified as new).
//
// Times are passed in (no clock inside). Thread safety: all methods may be
// called concurrently (one internal mutex).
#ifndef TRACEHEALTH_SERVER_ALERTS_ENGINE_H_
#define TRACEHEALTH_SERVER_ALERTS_ENGINE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/alerts/rules.h"
#include "server/index/label_set.h"

namespace tracehealth {

// What Tick needs to know of each host.
// An alert as /metrics exports it.
struct AlertBrief {
  std::string rule;
  std::string host_id;
  v1::AlertState state = v1::ALERT_STATE_UNSPECIFIED;
  std::string severity;
  int64_t active_since_ns = 0;
};

struct HostLiveness {
  std::string host_id;
  // The latest report's interval (host.silent_intervals).
  double interval_seconds = 0;
  absl::Time last_seen;
  // For annotations ({{label.NAME}}).
  server::LabelSet labels;
};

class AlertEngine {
 public:
  explicit AlertEngine(std::vector<AlertRule> rules,
                       absl::Duration keep_resolved = absl::Minutes(15));

  // Loads stored alerts (any state). Alerts of rules no longer configured are
  // ignored. Changes nothing that is already tracked.
  void Restore(const std::vector<v1::Alert>& alerts);

  // Evaluates every report rule for `report`'s host (`previous` is that
  // host's report before it, or null). Returns changed alerts.
  std::vector<v1::Alert> OnReport(const v1::HostReport& report,
                                  const v1::HostReport* previous,
                                  absl::Time now);
  // The same with, instead of the previous report, what `increased` rules
  // compare: previous_values[i] is rule i's Condition::FirstValue of the
  // previous report (an empty span: no previous report).
  std::vector<v1::Alert> OnReport(
      const v1::HostReport& report,
      absl::Span<const std::optional<double>> previous_values, absl::Time now);

  // Evaluates silence rules for `hosts`, promotes pending alerts whose `for`
  // has elapsed, forgets old resolved alerts. Returns changed alerts. A
  // silence alert has no report: its {{report.*}} annotations read
  // "unknown" ({{host}}, {{value}} and {{label.NAME}} are filled).
  std::vector<v1::Alert> Tick(absl::Time now,
                              const std::vector<HostLiveness>& hosts);

  // Takes `current` as the alert of (rule, host) instead of what this engine
  // had (another server stored it first); nullopt forgets the pair. Returns
  // nothing: the change is someone else's.
  void Adopt(const std::string& rule, const std::string& host,
             const std::optional<v1::Alert>& current);

  // Pending, firing and recently resolved alerts, sorted by (rule, host).
  std::vector<v1::Alert> Alerts() const;
  // The same alerts, only the fields /metrics needs (no labels or
  // annotations copied): cheap at a fleet's worth of alerts.
  std::vector<AlertBrief> Briefs() const;

  const std::vector<AlertRule>& rules() const { return rules_; }
  // Whether any rule is a silence rule (Tick needs the hosts).
  bool has_silence_rules() const;

 private:
  struct Instance {
    v1::Alert alert;
    // Whether the condition matched at the last evaluation.
    bool matching = false;
  };
  using Key = std::pair<std::string, std::string>;  // (rule, host)

  // Applies one evaluation result; appends to `changed` when state moved.
  // `report` (may be null) fills the annotations' {{report.*}}.
  void Apply(const AlertRule& rule, const std::string& host,
             const std::map<std::string, std::string>& host_labels,
             const v1::HostReport* report, bool matched, double value,
             absl::Time now, std::vector<v1::Alert>* changed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether (rule, host) is pending or firing.
  bool Live(const std::string& rule, const std::string& host) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<v1::Alert> Evaluate(
      const v1::HostReport& report, const v1::HostReport* previous,
      absl::Span<const std::optional<double>> previous_values, absl::Time now);
  void Promote(Instance& inst, const AlertRule& rule, absl::Time now,
               std::vector<v1::Alert>* changed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const AlertRule* FindRule(const std::string& name) const;

  const std::vector<AlertRule> rules_;
  const absl::Duration keep_resolved_;
  mutable absl::Mutex mu_;
  std::map<Key, Instance> instances_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_ENGINE_H_
