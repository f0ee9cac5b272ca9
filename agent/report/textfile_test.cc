#include "agent/report/textfile.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

v1::ThresholdCheck* AddCheck(v1::AttachPrediction* a,
                             v1::ThresholdCheck::Kind kind, double margin,
                             bool applies) {
  v1::ThresholdCheck* c = a->add_checks();
  c->set_kind(kind);
  c->set_margin(margin);
  c->set_applies(applies);
  return c;
}

// A host with two attach predictions, a stack depot near its budget and no
// KASAN vmap purge.
v1::HostReport Report() {
  v1::HostReport r;
  r.set_host_id("node-7");
  r.mutable_observed_at()->set_seconds(1700000000);
  r.mutable_observed_at()->set_nanos(500000000);
  r.set_interval_seconds(15);
  r.mutable_snapshot()->mutable_threads()->set_total(400000);
  r.mutable_health()->set_spool_dropped_total(2);
  v1::Predictions* p = r.mutable_predictions();
  p->set_worst_risk(v1::RISK_WARNING);
  v1::AttachPrediction* k = p->add_attach();
  k->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  k->set_latency_seconds(7.25);
  AddCheck(k, v1::ThresholdCheck::KIND_SOFT_LOCKUP, 0.5, true);
  AddCheck(k, v1::ThresholdCheck::KIND_RCU_STALL, 0.25, true);
  // A second soft-lockup check: the first counts, as on the server.
  AddCheck(k, v1::ThresholdCheck::KIND_SOFT_LOCKUP, 9, true);
  // Not applying (no latency budget set): no series.
  AddCheck(k, v1::ThresholdCheck::KIND_LATENCY, 3, false);
  v1::AttachPrediction* f = p->add_attach();
  f->set_probe_kind(v1::PROBE_KIND_FENTRY_FEXIT);
  f->set_latency_seconds(0);
  p->mutable_stack_depot()->set_budget_ratio(0.85);
  return r;
}

TEST(RenderTextfile, ExactText) {
  EXPECT_EQ(RenderTextfile(Report()),
            "# HELP tracehealth_attach_latency_seconds Predicted latency of "
            "the first attach of a probe kind.\n"
            "# TYPE tracehealth_attach_latency_seconds gauge\n"
            "tracehealth_attach_latency_seconds{host=\"node-7\",probe_kind="
            "\"kprobe_multi_return\"} 7.25\n"
            "tracehealth_attach_latency_seconds{host=\"node-7\",probe_kind="
            "\"fentry_fexit\"} 0\n"
            "# HELP tracehealth_attach_stall_margin_ratio Predicted attach "
            "stall over its threshold (> 1: crossed), per check.\n"
            "# TYPE tracehealth_attach_stall_margin_ratio gauge\n"
            "tracehealth_attach_stall_margin_ratio{check=\"soft_lockup\",host="
            "\"node-7\",probe_kind=\"kprobe_multi_return\"} 0.5\n"
            "tracehealth_attach_stall_margin_ratio{check=\"rcu_stall\",host="
            "\"node-7\",probe_kind=\"kprobe_multi_return\"} 0.25\n"
            "# HELP tracehealth_stackdepot_pool_budget_ratio Stack depot pools "
            "used over the pool budget.\n"
            "# TYPE tracehealth_stackdepot_pool_budget_ratio gauge\n"
            "tracehealth_stackdepot_pool_budget_ratio{host=\"node-7\"} 0.85\n"
            "# HELP tracehealth_host_last_report_timestamp_seconds When the "
            "agent took the snapshot of its last report.\n"
            "# TYPE tracehealth_host_last_report_timestamp_seconds gauge\n"
            "tracehealth_host_last_report_timestamp_seconds{host=\"node-7\"} "
            "1700000000.5\n"
            "# HELP tracehealth_host_report_interval_seconds The agent's "
            "report interval.\n"
            "# TYPE tracehealth_host_report_interval_seconds gauge\n"
            "tracehealth_host_report_interval_seconds{host=\"node-7\"} 15\n"
            "# HELP tracehealth_host_threads Threads on the host.\n"
            "# TYPE tracehealth_host_threads gauge\n"
            "tracehealth_host_threads{host=\"node-7\"} 400000\n"
            "# HELP tracehealth_host_risk Worst predicted risk (0 unknown, 1 "
            "none, 2 latency, 3 warning, 4 stall).\n"
            "# TYPE tracehealth_host_risk gauge\n"
            "tracehealth_host_risk{host=\"node-7\"} 3\n"
            "# HELP tracehealth_agent_spool_dropped_reports_total Reports the "
            "host's agent dropped because its spool was full (since agent "
            "start).\n"
            "# TYPE tracehealth_agent_spool_dropped_reports_total counter\n"
            "tracehealth_agent_spool_dropped_reports_total{host=\"node-7\"} "
            "2\n");
}

TEST(RenderTextfile, VmapPurgeAndExhaustionWhenPredicted) {
  v1::HostReport r = Report();
  v1::VmapPurgePrediction* vp = r.mutable_predictions()->mutable_vmap_purge();
  vp->set_applies(true);
  vp->set_purge_seconds(23.8);
  v1::ThresholdCheck* rcu = vp->add_checks();
  rcu->set_kind(v1::ThresholdCheck::KIND_RCU_STALL);
  rcu->set_margin(1.1);
  rcu->set_applies(true);
  v1::ThresholdCheck* soft = vp->add_checks();
  soft->set_kind(v1::ThresholdCheck::KIND_SOFT_LOCKUP);
  soft->set_margin(1.19);
  soft->set_applies(true);
  r.mutable_predictions()->mutable_stack_depot()->set_seconds_to_exhaustion(
      7200);
  const std::string text = RenderTextfile(r);
  EXPECT_NE(text.find("\ntracehealth_vmap_purge_seconds{host=\"node-7\"} "
                      "23.8\n"),
            std::string::npos)
      << text;
  // The soft-lockup check's margin, not the RCU one before it.
  EXPECT_NE(text.find("\ntracehealth_vmap_purge_lockup_margin_ratio{host="
                      "\"node-7\"} 1.19\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\ntracehealth_stackdepot_seconds_to_exhaustion{host="
                      "\"node-7\"} 7200\n"),
            std::string::npos)
      << text;
  // Not applying: the duration is left out (0 would read as a prediction).
  vp->set_applies(false);
  EXPECT_EQ(RenderTextfile(r).find("tracehealth_vmap_purge_seconds{"),
            std::string::npos);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(WriteTextfile, ReplacesTheFileAndLeavesNoTemporary) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/tf");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  v1::HostReport r = Report();
  ASSERT_TRUE(WriteTextfile(dir, r).ok());
  r.mutable_predictions()->set_worst_risk(v1::RISK_STALL);
  ASSERT_TRUE(WriteTextfile(dir, r).ok());
  EXPECT_EQ(ReadAll(dir + "/tracehealth.prom"), RenderTextfile(r));
  struct stat st;
  EXPECT_NE(stat((dir + "/.tracehealth.prom.tmp").c_str(), &st), 0);
}

TEST(WriteTextfile, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/absent");
  absl::Status s = WriteTextfile(dir, Report());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir + "/.tracehealth.prom.tmp"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace tracehealth::agent
