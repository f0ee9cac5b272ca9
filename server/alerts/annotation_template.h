// AnnotationTemplate: an alert annotation ("summary", "description") with
// placeholders, parsed once when the rules are loaded.
//
// Placeholders, each optionally followed by a filter ("{{value | percent}}"):
//   {{host}} {{rule}} {{severity}}  the alert's host, rule name, severity
//   {{value}}                       the value the condition compared
//   {{threshold}}                   the condition's threshold
//   {{label.NAME}}                  the host's label NAME ("" when absent)
//   {{report.PATH}}                 any numeric, bool or enum field of the
//                                   host's report, as a condition names it
//                                   (server/alerts/condition.h), e.g.
//                                   report.predictions.vmap_purge.purge_seconds
//                                   ("unknown" when unset)
// Numbers are rendered in four significant digits (23.87, 0.9705, 1.2e+06);
// the `percent` filter renders a ratio as a percentage (0.9705 -> "97%").
//
// Thread safety: immutable after Parse; Expand may be called concurrently.
#ifndef TRACEHEALTH_SERVER_ALERTS_ANNOTATION_TEMPLATE_H_
#define TRACEHEALTH_SERVER_ALERTS_ANNOTATION_TEMPLATE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/alerts/condition.h"

namespace tracehealth {

// What one expansion fills in.
struct AnnotationContext {
  std::string rule;
  std::string host;
  std::string severity;
  double value = 0;
  double threshold = 0;
  const std::map<std::string, std::string>* labels = nullptr;  // may be null
  const v1::HostReport* report = nullptr;                      // may be null
};

class AnnotationTemplate {
 public:
  // Errors (InvalidArgument, naming the placeholder): an unterminated
  // "{{", an unknown placeholder or filter, a report path that does not
  // resolve, a filter on a text placeholder.
  static absl::StatusOr<AnnotationTemplate> Parse(absl::string_view text);

  std::string Expand(const AnnotationContext& context) const;

  const std::string& text() const { return text_; }

 private:
  enum class Kind {
    kLiteral,
    kHost,
    kRule,
    kSeverity,
    kValue,
    kThreshold,
    kLabel,
    kReport
  };
  struct Segment {
    Kind kind = Kind::kLiteral;
    std::string text;  // the literal, or the label name
    bool percent = false;
    std::shared_ptr<const Condition> field;  // kReport
  };

  std::string text_;
  std::vector<Segment> segments_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_ANNOTATION_TEMPLATE_H_
