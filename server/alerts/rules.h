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
// Annotations are templates (annotation_template.h): {{host}}, {{rule}},
// {{value}}, {{threshold}}, {{severity}}, {{label.NAME}} and
// {{report.PATH}} (any field of the host's report).
#ifndef TRACEHEALTH_SERVER_ALERTS_RULES_H_
#define TRACEHEALTH_SERVER_ALERTS_RULES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/alerts/annotation_template.h"
#include "server/alerts/condition.h"

namespace tracehealth {

struct AlertRule {
  std::string name;
  Condition condition;
  absl::Duration for_duration = absl::ZeroDuration();
  std::string severity = "warning";
  std::map<std::string, std::string> labels;
  std::map<std::string, AnnotationTemplate> annotations;
};

// Parses a rules file. Errors (InvalidArgument naming the rule): bad YAML,
// missing name/condition, duplicate or invalid names, bad condition, bad or
// negative `for`, non-string labels/annotations, an annotation template that
// does not parse, reserved label names (alertname, host, severity).
absl::StatusOr<std::vector<AlertRule>> ParseAlertRules(absl::string_view yaml);

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_RULES_H_
