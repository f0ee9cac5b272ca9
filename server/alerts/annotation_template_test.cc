#include "server/alerts/annotation_template.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

std::string Expand(const std::string& text, const AnnotationContext& c) {
  absl::StatusOr<AnnotationTemplate> t = AnnotationTemplate::Parse(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status();
  return t.ok() ? t->Expand(c) : "";
}

TEST(AnnotationTemplateTest, FillsEveryPlaceholder) {
  const std::map<std::string, std::string> labels = {{"rack", "r7"}};
  v1::HostReport r;
  r.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(
      23.870000000000005);
  r.mutable_predictions()->mutable_stack_depot()->set_budget_ratio(
      0.970458984375);
  AnnotationContext c;
  c.rule = "R";
  c.host = "h1";
  c.severity = "warning";
  c.value = 7.25;
  c.threshold = 5;
  c.labels = &labels;
  c.report = &r;
  EXPECT_EQ(Expand("{{host}} {{rule}} {{value}}>{{threshold}} {{severity}} "
                   "{{label.rack}}[{{label.none}}]",
                   c),
            "h1 R 7.25>5 warning r7[]");
  // Four significant digits; a ratio as a percentage (97.0458... -> 97).
  EXPECT_EQ(
      Expand("{{report.predictions.vmap_purge.purge_seconds}} s, "
             "{{ report.predictions.stack_depot.budget_ratio | percent }}",
             c),
      "23.87 s, 97%");
  // Unset fields (or no report) are unknown, not 0.
  EXPECT_EQ(
      Expand("{{report.predictions.stack_depot.seconds_to_exhaustion}}", c),
      "unknown");
  c.report = nullptr;
  EXPECT_EQ(Expand("{{report.predictions.vmap_purge.purge_seconds}}", c),
            "unknown");
  EXPECT_EQ(Expand("no placeholders", c), "no placeholders");
  EXPECT_EQ(Expand("", c), "");
}

TEST(AnnotationTemplateTest, RefusesWhatItCannotFill) {
  const std::pair<const char*, const char*> bad[] = {
      {"{{valeu}}", "unknown placeholder {{valeu}}"},
      {"a {{host", "unterminated placeholder in \"a {{host\""},
      {"{{value | humanize}}", "unknown filter in {{value | humanize}}"},
      {"{{host|percent}}", "percent of a text in {{host|percent}}"},
      {"{{report.host.silent_intervals}}",
       "not a report field in {{report.host.silent_intervals}}"},
  };
  for (const auto& [text, message] : bad) {
    absl::StatusOr<AnnotationTemplate> t = AnnotationTemplate::Parse(text);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(t.status()));
    EXPECT_EQ(t.status().message(), message);
  }
  absl::StatusOr<AnnotationTemplate> path =
      AnnotationTemplate::Parse("{{report.predictions.nope}}");
  ASSERT_FALSE(path.ok());
  EXPECT_NE(path.status().message().find("{{report.predictions.nope}}"),
            std::string::npos)
      << path.status();
}

}  // namespace
}  // namespace tracehealth
