#include "server/metrics/host_collector.h"

#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"

namespace tracehealth::server {
namespace {

TEST(HostCollectorTest, ExportsPerHostGauges) {
  auto r = std::make_shared<v1::HostReport>();
  r->set_host_id("db-1");
  r->set_seq(1);
  r->set_interval_seconds(30);
  auto* a = r->mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_latency_seconds(7.5);
  auto* c = a->add_checks();
  c->set_kind(v1::ThresholdCheck::KIND_SOFT_LOCKUP);
  c->set_margin(0.375);
  c->set_applies(true);
  auto* skipped = a->add_checks();
  skipped->set_kind(v1::ThresholdCheck::KIND_RCU_STALL);
  skipped->set_applies(false);
  r->mutable_predictions()->mutable_stack_depot()->set_budget_ratio(0.25);
  r->mutable_predictions()->set_worst_risk(v1::RISK_LATENCY);
  r->mutable_snapshot()->mutable_threads()->set_total(240000);
  r->mutable_health()->set_spool_dropped_total(12);
  auto* purge = r->mutable_predictions()->mutable_vmap_purge()->add_checks();
  purge->set_kind(v1::ThresholdCheck::KIND_SOFT_LOCKUP);
  purge->set_margin(1.25);
  purge->set_applies(true);
  HostIndex index;
  absl::Time seen = absl::FromUnixSeconds(1000);
  index.Apply({{StoredReport::Of(*r), seen}});
  HostMetricsOptions opts;
  opts.now = [&] { return seen + absl::Seconds(200); };
  HostCollector collector(&index, opts);
  std::string text =
      prometheus::TextSerializer().Serialize(collector.Collect());
  EXPECT_NE(text.find("tracehealth_attach_latency_seconds{host=\"db-1\",probe_"
                      "kind=\"kprobe_multi_return\"} 7.5"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("tracehealth_attach_stall_margin_ratio{check=\"soft_lockup\","
                "host=\"db-1\",probe_kind=\"kprobe_multi_return\"} 0.375"),
      std::string::npos);
  EXPECT_EQ(text.find("rcu_stall"), std::string::npos);
  EXPECT_NE(
      text.find("tracehealth_stackdepot_pool_budget_ratio{host=\"db-1\"} 0.25"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          "tracehealth_host_last_report_timestamp_seconds{host=\"db-1\"} 1000"),
      std::string::npos);
  EXPECT_NE(text.find("tracehealth_host_risk{host=\"db-1\"} 2"),
            std::string::npos);
  // 200 s > 3 x 30 s: stale.
  EXPECT_NE(text.find("tracehealth_host_stale{host=\"db-1\"} 1"),
            std::string::npos);
  EXPECT_EQ(text.find("tracehealth_vmap_purge_seconds{"), std::string::npos);
  EXPECT_NE(
      text.find(
          "tracehealth_vmap_purge_lockup_margin_ratio{host=\"db-1\"} 1.25"),
      std::string::npos);
  EXPECT_NE(
      text.find("tracehealth_host_report_interval_seconds{host=\"db-1\"} 30"),
      std::string::npos);
  EXPECT_NE(text.find("tracehealth_host_threads{host=\"db-1\"} 240000"),
            std::string::npos);
  EXPECT_NE(
      text.find("# TYPE tracehealth_agent_spool_dropped_reports_total counter"),
      std::string::npos);
  EXPECT_NE(
      text.find(
          "tracehealth_agent_spool_dropped_reports_total{host=\"db-1\"} 12"),
      std::string::npos);
}

// A host with one kprobe_multi_return prediction.
CommittedReport Host(const std::string& id, v1::Risk risk, double latency,
                     const std::string& release, v1::PreemptMode preempt,
                     absl::Time seen, uint64_t dropped = 0,
                     std::optional<double> soft_margin = std::nullopt) {
  v1::HostReport r;
  r.set_host_id(id);
  r.set_seq(1);
  r.set_interval_seconds(30);
  if (!release.empty())
    r.mutable_snapshot()->mutable_kernel()->set_release(release);
  r.mutable_snapshot()->mutable_kernel()->set_preempt_mode(preempt);
  r.mutable_predictions()->set_worst_risk(risk);
  auto* a = r.mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_latency_seconds(latency);
  a->set_risk(risk);
  if (soft_margin) {
    auto* c = a->add_checks();
    c->set_kind(v1::ThresholdCheck::KIND_SOFT_LOCKUP);
    c->set_margin(*soft_margin);
    c->set_applies(true);
  }
  r.mutable_health()->set_spool_dropped_total(dropped);
  return {StoredReport::Of(r), seen};
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(HostCollectorTest, FleetAggregatesAndOnlyTheHostsThatNeedAttention) {
  const absl::Time now = absl::FromUnixSeconds(100000);
  const absl::Time fresh = now - absl::Seconds(10);
  const absl::Time old = now - absl::Seconds(91);  // > 3 x 30 s
  HostIndex index;
  index.Apply({
      Host("stall-1", v1::RISK_STALL, 40, "6.16.3", v1::PREEMPT_MODE_NONE,
           fresh, 0, 2.0),
      Host("warn-1", v1::RISK_WARNING, 12, "6.16.3", v1::PREEMPT_MODE_NONE,
           fresh, 0, 0.6),
      Host("lat-1", v1::RISK_LATENCY, 7.5, "6.19.2", v1::PREEMPT_MODE_LAZY,
           fresh),
      Host("quiet-1", v1::RISK_NONE, 0.004, "6.19.2", v1::PREEMPT_MODE_LAZY,
           fresh),
      Host("quiet-2", v1::RISK_NONE, 0.02, "", v1::PREEMPT_MODE_UNKNOWN, fresh),
      Host("stale-1", v1::RISK_NONE, 0.02, "6.19.2", v1::PREEMPT_MODE_LAZY,
           old),
      Host("drop-1", v1::RISK_NONE, 0.02, "6.19.2", v1::PREEMPT_MODE_LAZY,
           fresh, 3),
  });
  HostMetricsOptions opts;
  opts.now = [&] { return now; };
  const std::string all = prometheus::TextSerializer().Serialize(
      HostCollector(&index, opts).Collect());
  EXPECT_TRUE(Has(all, "tracehealth_fleet_hosts{risk=\"stall\"} 1")) << all;
  EXPECT_TRUE(Has(all, "tracehealth_fleet_hosts{risk=\"warning\"} 1"));
  EXPECT_TRUE(Has(all, "tracehealth_fleet_hosts{risk=\"latency\"} 1"));
  EXPECT_TRUE(Has(all, "tracehealth_fleet_hosts{risk=\"none\"} 4"));
  EXPECT_TRUE(Has(all, "tracehealth_fleet_hosts{risk=\"unknown\"} 0"));
  EXPECT_TRUE(Has(all, "tracehealth_fleet_stale_hosts 1"));
  // Largest first: 6.19.2 lazy has 4 hosts, 6.16.3 none 2.
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_kernel_hosts{kernel=\"6.19.2\",preempt="
                  "\"lazy\"} 4"));
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_kernel_hosts{kernel=\"6.16.3\",preempt="
                  "\"none\"} 2"));
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_kernel_hosts{kernel=\"unknown\",preempt="
                  "\"unknown\"} 1"));
  // Of 6.16.3's two hosts one is at stall (warn-1 is one step below); none
  // of 6.19.2's.
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_kernel_stall_hosts{kernel=\"6.16.3\","
                  "preempt=\"none\"} 1"));
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_kernel_stall_hosts{kernel=\"6.19.2\","
                  "preempt=\"lazy\"} 0"));
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_kernel_stall_hosts{kernel=\"unknown\","
                  "preempt=\"unknown\"} 0"));
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_attach_risk_hosts{probe_kind=\"kprobe_"
                  "multi_return\",risk=\"stall\"} 1"));
  // Latencies 40, 12, 7.5, 0.004 and three of 0.02: three up to 0.1 s, one
  // more up to 10 s, one more to 20 s, the last one above 20 s.
  const std::string h =
      "tracehealth_fleet_attach_latency_seconds_bucket{probe_kind=\"kprobe_"
      "multi_return\",";
  EXPECT_TRUE(Has(all, h + "le=\"0.001\"} 0"));
  EXPECT_TRUE(Has(all, h + "le=\"0.01\"} 1"));
  EXPECT_TRUE(Has(all, h + "le=\"0.1\"} 4"));
  EXPECT_TRUE(Has(all, h + "le=\"5\"} 4"));
  EXPECT_TRUE(Has(all, h + "le=\"10\"} 5"));
  EXPECT_TRUE(Has(all, h + "le=\"20\"} 6"));
  EXPECT_TRUE(Has(all, h + "le=\"60\"} 7"));
  EXPECT_TRUE(Has(all, h + "le=\"+Inf\"} 7"));
  EXPECT_TRUE(Has(all,
                  "tracehealth_fleet_attach_latency_seconds_count{probe_kind="
                  "\"kprobe_multi_return\"} 7"));
  // Margins only where a stall check applies: 0.6 and 2.0.
  const std::string m =
      "tracehealth_fleet_attach_stall_margin_ratio_bucket{probe_kind=\"kprobe_"
      "multi_return\",";
  EXPECT_TRUE(Has(all, m + "le=\"0.5\"} 0"));
  EXPECT_TRUE(Has(all, m + "le=\"0.75\"} 1"));
  EXPECT_TRUE(Has(all, m + "le=\"1.5\"} 1"));
  EXPECT_TRUE(Has(all, m + "le=\"2\"} 2"));
  // At or above latency, stale, or dropping: 5 hosts; quiet-1 and quiet-2
  // have no series of their own.
  EXPECT_TRUE(Has(all, "tracehealth_metrics_host_series_hosts 5"));
  EXPECT_TRUE(Has(all, "tracehealth_metrics_host_series_omitted_hosts 0"));
  for (const char* host : {"stall-1", "warn-1", "lat-1", "stale-1", "drop-1"}) {
    EXPECT_NE(
        all.find(absl::StrCat("tracehealth_host_risk{host=\"", host, "\"}")),
        std::string::npos)
        << host;
  }
  EXPECT_EQ(all.find("quiet-"), std::string::npos);

  // Two at most: the worst two, the rest counted as omitted.
  opts.max_hosts = 2;
  const std::string two = prometheus::TextSerializer().Serialize(
      HostCollector(&index, opts).Collect());
  EXPECT_TRUE(Has(two, "tracehealth_metrics_host_series_hosts 2"));
  EXPECT_TRUE(Has(two, "tracehealth_metrics_host_series_omitted_hosts 3"));
  EXPECT_TRUE(Has(two, "tracehealth_host_risk{host=\"stall-1\"} 4"));
  EXPECT_TRUE(Has(two, "tracehealth_host_risk{host=\"warn-1\"} 3"));
  EXPECT_EQ(two.find("lat-1"), std::string::npos);
  // The aggregates do not change with it.
  EXPECT_TRUE(Has(two, "tracehealth_fleet_hosts{risk=\"none\"} 4"));

  // From warning up (stale and dropping hosts still count).
  opts.max_hosts = 1000;
  opts.host_min_risk = v1::RISK_WARNING;
  const std::string warn = prometheus::TextSerializer().Serialize(
      HostCollector(&index, opts).Collect());
  EXPECT_TRUE(Has(warn, "tracehealth_metrics_host_series_hosts 4"));
  EXPECT_EQ(warn.find("lat-1"), std::string::npos);
  EXPECT_NE(warn.find("stale-1"), std::string::npos);
  opts.max_hosts = 0;
  const std::string none = prometheus::TextSerializer().Serialize(
      HostCollector(&index, opts).Collect());
  EXPECT_TRUE(Has(none, "tracehealth_metrics_host_series_omitted_hosts 4"));
  EXPECT_EQ(none.find("tracehealth_host_risk{"), std::string::npos);
}

}  // namespace
}  // namespace tracehealth::server
