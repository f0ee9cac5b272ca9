#include "server/alerts/alert_series.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

AlertBrief MakeAlert(const std::string& rule, const std::string& host,
                     v1::AlertState state, const std::string& severity,
                     int64_t active_since_s) {
  return {rule, host, state, severity, active_since_s * 1'000'000'000};
}

std::string Label(const prometheus::ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label) {
    if (l.name == name) return l.value;
  }
  return "";
}

// host/rule of each tracehealth_alerts series, in order.
std::vector<std::string> PerHost(
    const std::vector<prometheus::MetricFamily>& f) {
  std::vector<std::string> out;
  for (const auto& m : f[0].metric) {
    out.push_back(Label(m, "host") + "/" + Label(m, "alertname"));
  }
  return out;
}

// Five hosts: firing critical (c, since 200), firing critical (a, since
// 300), firing warning (b, since 100), pending critical (d), and e with only
// a resolved alert; b also has a pending critical alert.
std::vector<AlertBrief> Fleet() {
  return {
      MakeAlert("Latency", "b", v1::ALERT_STATE_FIRING, "warning", 100),
      MakeAlert("Stall", "b", v1::ALERT_STATE_PENDING, "critical", 400),
      MakeAlert("Stall", "a", v1::ALERT_STATE_FIRING, "critical", 300),
      MakeAlert("Stall", "d", v1::ALERT_STATE_PENDING, "critical", 50),
      MakeAlert("Stall", "c", v1::ALERT_STATE_FIRING, "critical", 200),
      MakeAlert("Stall", "e", v1::ALERT_STATE_RESOLVED, "critical", 10),
  };
}

TEST(AlertSeriesTest, CountsEveryAlertByRuleStateSeverity) {
  std::vector<prometheus::MetricFamily> f = AlertSeries(Fleet(), 0);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[1].name, "tracehealth_alert_hosts");
  std::map<std::string, double> counts;
  for (const auto& m : f[1].metric) {
    counts[Label(m, "alertname") + "/" + Label(m, "alertstate") + "/" +
           Label(m, "severity")] = m.gauge.value;
  }
  EXPECT_EQ(counts, (std::map<std::string, double>{
                        {"Latency/firing/warning", 1},
                        {"Stall/firing/critical", 2},
                        {"Stall/pending/critical", 2},
                    }));
  // max_hosts 0: no per-host series, all four alerting hosts omitted (e's
  // alert is resolved).
  EXPECT_EQ(f[0].name, "tracehealth_alerts");
  EXPECT_TRUE(f[0].metric.empty());
  EXPECT_EQ(f[2].name, "tracehealth_alerts_omitted_hosts");
  EXPECT_EQ(f[2].metric[0].gauge.value, 4);
}

TEST(AlertSeriesTest, WorstHostsFirstUpToTheLimit) {
  // Firing critical c (longer active) and a, then b (firing warning), then d
  // (pending). A host's alerts stay together.
  EXPECT_EQ(PerHost(AlertSeries(Fleet(), 2)),
            (std::vector<std::string>{"c/Stall", "a/Stall"}));
  EXPECT_EQ(AlertSeries(Fleet(), 2)[2].metric[0].gauge.value, 2);
  EXPECT_EQ(
      PerHost(AlertSeries(Fleet(), 3)),
      (std::vector<std::string>{"c/Stall", "a/Stall", "b/Latency", "b/Stall"}));
  EXPECT_EQ(AlertSeries(Fleet(), 3)[2].metric[0].gauge.value, 1);
  // One under the number of alerting hosts, and exactly it.
  EXPECT_EQ(PerHost(AlertSeries(Fleet(), 4)).size(), 5u);
  EXPECT_EQ(AlertSeries(Fleet(), 4)[2].metric[0].gauge.value, 0);
  EXPECT_EQ(PerHost(AlertSeries(Fleet(), 1000)).size(), 5u);
}

TEST(AlertSeriesTest, PerHostSeriesLabels) {
  std::vector<prometheus::MetricFamily> f = AlertSeries(Fleet(), 1);
  ASSERT_EQ(f[0].metric.size(), 1u);
  const prometheus::ClientMetric& m = f[0].metric[0];
  EXPECT_EQ(Label(m, "alertname"), "Stall");
  EXPECT_EQ(Label(m, "alertstate"), "firing");
  EXPECT_EQ(Label(m, "host"), "c");
  EXPECT_EQ(Label(m, "severity"), "critical");
  EXPECT_EQ(m.gauge.value, 1);
}

}  // namespace
}  // namespace tracehealth::server
