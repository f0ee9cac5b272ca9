#include "server/alerts/rules.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

std::string ReadRunfile(const std::string& path) {
  std::string full =
      std::string(std::getenv("TEST_SRCDIR")) + "/tracehealth/" + path;
  std::ifstream in(full);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(RulesTest, ShippedDefaultRulesParse) {
  std::string yaml = ReadRunfile("deploy/alerts/rules.yaml");
  ASSERT_FALSE(yaml.empty());
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(yaml);
  ASSERT_TRUE(rules.ok()) << rules.status();
  std::vector<std::string> names;
  for (const AlertRule& r : *rules) names.push_back(r.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "TracehealthAttachLatencyHigh", "TracehealthAttachStallRisk",
                "TracehealthStackDepotBudgetHigh",
                "TracehealthStackDepotExhaustionSoon",
                "TracehealthVmapPurgeLockupRisk", "TracehealthHostSilent",
                "TracehealthAgentSpoolDropping"}));
  EXPECT_EQ((*rules)[0].for_duration, absl::Minutes(5));
  EXPECT_DOUBLE_EQ((*rules)[0].condition.threshold(), 5.0);
  EXPECT_EQ((*rules)[1].severity, "critical");
}

TEST(RulesTest, RejectsBadRules) {
  const char* bad[] = {
      "rules: [",
      "other: []",
      "rules:\n  - condition: predictions.vmap_purge.purge_seconds > 1\n",
      "rules:\n  - name: 1bad\n    condition: "
      "predictions.vmap_purge.purge_seconds > 1\n",
      "rules:\n  - name: A\n    condition: "
      "predictions.vmap_purge.purge_seconds > 1\n"
      "  - name: A\n    condition: predictions.vmap_purge.purge_seconds > 2\n",
      "rules:\n  - name: A\n    condition: predictions.vmap_purge.nope > 1\n",
      "rules:\n  - name: A\n    condition: "
      "predictions.vmap_purge.purge_seconds > 1\n"
      "    for: soon\n",
      "rules:\n  - name: A\n    condition: "
      "predictions.vmap_purge.purge_seconds > 1\n"
      "    labels: {host: x}\n",
      "rules:\n  - name: A\n    condition: "
      "predictions.vmap_purge.purge_seconds > 1\n"
      "    annotations: [a]\n",
  };
  for (const char* yaml : bad) {
    absl::StatusOr<std::vector<AlertRule>> r = ParseAlertRules(yaml);
    EXPECT_FALSE(r.ok()) << yaml;
    if (!r.ok()) {
      EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
    }
  }
}

TEST(RulesTest, AnnotationsAreTemplatesParsedAtLoad) {
  auto rules = ParseAlertRules(
      "rules:\n  - name: A\n    condition: "
      "predictions.vmap_purge.risk >= RISK_STALL\n"
      "    annotations:\n      summary: \"{{host}} would purge for "
      "{{report.predictions.vmap_purge.purge_seconds}} s\"\n");
  ASSERT_TRUE(rules.ok()) << rules.status();
  v1::HostReport r;
  r.mutable_predictions()->mutable_vmap_purge()->set_purge_seconds(23.87);
  AnnotationContext c;
  c.host = "k1";
  c.report = &r;
  EXPECT_EQ((*rules)[0].annotations.at("summary").Expand(c),
            "k1 would purge for 23.87 s");
  // A template that does not parse refuses the file, naming the rule.
  auto bad = ParseAlertRules(
      "rules:\n  - name: B\n    condition: host.silent_intervals >= 3\n"
      "    annotations:\n      summary: \"{{valeu}}\"\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.status().message(),
      "alert rules: B: annotation summary: unknown placeholder {{valeu}}");
}

}  // namespace
}  // namespace tracehealth
