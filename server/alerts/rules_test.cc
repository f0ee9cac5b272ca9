#include "server/alerts/rules.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/strings/match.h"
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

// Each refusal: INVALID_ARGUMENT naming the rule (by name, or by its
// place before it has one) and what is wrong with it.
TEST(RulesTest, RejectsBadRules) {
  constexpr char kCond[] =
      "    condition: predictions.vmap_purge.purge_seconds > 1\n";
  const std::pair<std::string, std::string> bad[] = {
      {"other: []", "alert rules: want a top-level `rules:` list"},
      {"rules:\n  - condition: predictions.vmap_purge.purge_seconds > 1\n",
       "alert rules: rule #1: missing name"},
      {std::string("rules:\n  - name: 1bad\n") + kCond,
       "alert rules: 1bad: name must match [A-Za-z_][A-Za-z0-9_]*"},
      {std::string("rules:\n  - name: A\n") + kCond + "  - name: A\n" + kCond,
       "alert rules: A: duplicate name"},
      {"rules:\n  - name: A\n", "alert rules: A: missing condition"},
      {std::string("rules:\n  - name: A\n") + kCond + "    for: soon\n",
       "alert rules: A: `for` is not a duration like 30s, 5m, 1h"},
      {std::string("rules:\n  - name: A\n") + kCond + "    for: -1m\n",
       "alert rules: A: `for` is not a duration like 30s, 5m, 1h"},
      {std::string("rules:\n  - name: A\n") + kCond + "    labels: {host: x}\n",
       "alert rules: A: label `host` is set by the server"},
      {std::string("rules:\n  - name: A\n") + kCond + "    annotations: [a]\n",
       "alert rules: A: annotations is not a map"},
  };
  for (const auto& [yaml, message] : bad) {
    absl::StatusOr<std::vector<AlertRule>> r = ParseAlertRules(yaml);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << yaml;
    EXPECT_EQ(r.status().message(), message) << yaml;
  }
  // Broken YAML and an unknown field: refused, with the parser's reason.
  for (const char* yaml : {"rules: [",
                           "rules:\n  - name: A\n    condition: "
                           "predictions.vmap_purge.nope > 1\n"}) {
    absl::StatusOr<std::vector<AlertRule>> r = ParseAlertRules(yaml);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << yaml;
    EXPECT_TRUE(absl::StartsWith(r.status().message(), "alert rules: "))
        << r.status();
  }
  // `for: 0s` is a duration: fires at once.
  absl::StatusOr<std::vector<AlertRule>> zero = ParseAlertRules(
      std::string("rules:\n  - name: A\n") + kCond + "    for: 0s\n");
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ((*zero)[0].for_duration, absl::ZeroDuration());
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
