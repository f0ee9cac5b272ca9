// Alert rules, loaded from a YAML file (deploy/alerts/rules.yaml):
//
//   rules:
//     - name: TracehealthAttachLatencyHigh          # [A-Za-z_][A-Za-z0-9_]*
//       condition: predictions.attach[kprobe_multi_return].latency_seconds > 5
//       for: 5m                                     # absl duration, default 0s
//       severity: warning                           # default "warning"
//       labels: {team: kernel}                      # added to the alert
//       annotations:                                # templates, see below
//         summary: "{{host}}: kprobe_multi return attach {{value}} s"
//
// Annotation templates may use {{host}}, {{rule}}, {{value}}, {{threshold}},
// {{severity}} and {{label.NAME}} (the host's label NAME).
#ifndef TRACEHEALTH_SERVER_ALERTS_RULES_H_
#define TRACEHEALTH_SERVER_ALERTS_RULES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/alerts/condition.h"

namespace tracehealth {

struct AlertRule {
  std::string name;
  Condition condition;
  absl::Duration for_duration = absl::ZeroDuration();
  std::string severity = "warning";
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

// Parses a rules file. Errors (InvalidArgument naming the rule): bad YAML,
// missing name/condition, duplicate or invalid names, bad condition, bad or
// negative `for`, non-string labels/annotations, reserved label names
// (alertname, host, severity).
absl::StatusOr<std::vector<AlertRule>> ParseAlertRules(absl::string_view yaml);

// Fills an annotation template (see above).
std::string ExpandTemplate(
    absl::string_view tmpl, const std::string& rule, const std::string& host,
    double value, double threshold, const std::string& severity,
    const std::map<std::string, std::string>& host_labels);

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_RULES_H_
