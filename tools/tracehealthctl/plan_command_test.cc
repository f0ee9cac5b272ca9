#include "tools/tracehealthctl/plan_command.h"

#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(PlanCommandTest, RequestFromFlags) {
  v1::PredictAttachRequest req;
  PlanFlags plan;
  ModelFlags model;
  plan.max_latency = absl::ZeroDuration();
  absl::Status st = PlanRequestFromFlags(plan, model, &req);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--max_latency is required"), std::string::npos)
      << st;

  plan.max_latency = absl::Milliseconds(2500);
  plan.wave_hosts = 5;
  model.threads = 400000;
  ASSERT_TRUE(PlanRequestFromFlags(plan, model, &req).ok());
  EXPECT_EQ(req.plan().max_latency().seconds(), 2);
  EXPECT_EQ(req.plan().max_latency().nanos(), 500000000);
  EXPECT_EQ(req.plan().wave_host_ids(), 5u);
  EXPECT_EQ(req.what_if().threads(), 400000u);

  model.preempt = "sometimes";
  v1::PredictAttachRequest bad;
  st = PlanRequestFromFlags(plan, model, &bad);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--preempt: expected "), std::string::npos) << st;
  EXPECT_NE(st.message().find("'sometimes'"), std::string::npos) << st;
  model.preempt = "";
  plan.wave_hosts = -1;
  st = PlanRequestFromFlags(plan, model, &bad);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--wave_hosts must be >= 0"), std::string::npos)
      << st;
}

TEST(PlanCommandTest, PrintsCountsWavesAndWorstHosts) {
  v1::PredictAttachRequest req;
  req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  v1::PredictAttachResponse resp;
  resp.set_matched_hosts(3);
  v1::RolloutPlan* p = resp.mutable_plan();
  p->mutable_max_latency()->set_seconds(2);
  p->set_safe(2);
  p->set_lockup_risk(1);
  v1::PlanWave* w = p->add_waves();
  w->set_number(1);
  w->set_plan_class(v1::PLAN_CLASS_SAFE);
  w->set_hosts(2);
  w->set_max_latency_seconds(0.25);
  w->set_action("attach");
  w->add_host_ids("a");
  v1::PlanWave* l = p->add_waves();
  l->set_number(2);
  l->set_plan_class(v1::PLAN_CLASS_LOCKUP_RISK);
  l->set_hosts(1);
  l->set_max_latency_seconds(30);
  l->set_action("mitigate first");
  l->add_host_ids("c");
  v1::HostAttachAnswer* a = resp.add_answers();
  a->set_host_id("c");
  a->set_plan_class(v1::PLAN_CLASS_LOCKUP_RISK);
  a->mutable_prediction()->set_risk(v1::RISK_STALL);
  a->mutable_prediction()->set_latency_seconds(30);
  a->set_recommendation("do not attach now");
  std::ostringstream out;
  PrintPlan(req, resp, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("kprobe_multi_return on 3 host(s), at most 2.00 s an "
                      "attach: 2 safe, 0 over budget, 1 lockup risk, 0 "
                      "unknown"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1     safe         2      250.0 ms  attach"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2     lockup risk  1      30.00 s   mitigate first"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("wave 1: a (1 of 2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wave 2: c\n"), std::string::npos) << text;
  EXPECT_NE(text.find("c     lockup risk  stall"), std::string::npos) << text;
}

}  // namespace
}  // namespace tracehealth
