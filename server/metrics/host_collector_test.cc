#include "server/metrics/host_collector.h"

#include <map>

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
  HostCollector collector(&index, 3, [&] { return seen + absl::Seconds(200); });
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

}  // namespace
}  // namespace tracehealth::server
