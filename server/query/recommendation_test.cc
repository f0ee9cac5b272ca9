#include "server/query/recommendation.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

v1::AttachPrediction Walking(v1::Risk risk, double latency) {
  v1::AttachPrediction p;
  p.set_uses_fgraph(true);
  p.set_latency_seconds(latency);
  p.set_risk(risk);
  return p;
}

void AddCheck(v1::AttachPrediction* p, v1::ThresholdCheck::Kind kind,
              double threshold, double margin, bool applies, bool panics) {
  v1::ThresholdCheck* c = p->add_checks();
  c->set_kind(kind);
  c->set_threshold(threshold);
  c->set_margin(margin);
  c->set_applies(applies);
  c->set_panics(panics);
}

TEST(RecommendTest, NoWalkIsSafe) {
  v1::AttachPrediction p;
  p.set_latency_seconds(1e-6);
  EXPECT_EQ(Recommend(p),
            "safe to attach: this probe kind does not use fgraph on this "
            "kernel (about 1 us)");
  p.set_uses_fgraph(true);
  p.set_fgraph_already_active(true);
  p.set_latency_seconds(0.06);
  EXPECT_EQ(Recommend(p),
            "safe to attach: fgraph is already active, no shadow-stack walk "
            "(about 60.0 ms)");
}

// kprobe_multi_return on a kernel without CONFIG_FPROBE: the model marks it
// unavailable (and uses_fgraph false); it must not read as safe.
TEST(RecommendTest, UnavailableKindIsNotSafe) {
  v1::AttachPrediction p;
  p.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  p.set_unavailable(true);
  p.set_risk(v1::RISK_NONE);
  EXPECT_EQ(Recommend(p),
            "unavailable: this probe kind does not exist on this kernel (a "
            "config option off, or a release before it); the attach would "
            "fail");
  // Refused with fgraph active (before 6.11): not "safe, already active".
  v1::AttachPrediction b = Walking(v1::RISK_NONE, 0);
  b.set_fgraph_already_active(true);
  b.set_busy(true);
  EXPECT_EQ(Recommend(b),
            "refused by the kernel (-EBUSY): fgraph is already active and "
            "takes one user before 6.11");
}

TEST(RecommendTest, StallNamesTheWorstApplyingCheck) {
  v1::AttachPrediction p = Walking(v1::RISK_STALL, 221.852);
  // The RCU check has the larger margin but does not apply: the soft lockup
  // is named.
  AddCheck(&p, v1::ThresholdCheck::KIND_RCU_STALL, 21, 20.0, false, false);
  AddCheck(&p, v1::ThresholdCheck::KIND_SOFT_LOCKUP, 20, 11.09, true, true);
  EXPECT_EQ(Recommend(p),
            "do not attach now: 221.85 s without yielding crosses the "
            "soft-lockup threshold "
            "(20.00 s) and the host panics on it; attach while another fgraph "
            "user is active, "
            "or on a preemptible kernel");
}

TEST(RecommendTest, WarningLatencyNoneAndUnknown) {
  v1::AttachPrediction p = Walking(v1::RISK_WARNING, 12.5);
  AddCheck(&p, v1::ThresholdCheck::KIND_RCU_STALL, 21, 0.6, true, false);
  EXPECT_EQ(Recommend(p),
            "attach with care, outside peak: 12.50 s is within 2x of the "
            "RCU-stall threshold");
  EXPECT_EQ(Recommend(Walking(v1::RISK_LATENCY, 0.25)),
            "attach outside peak: the attaching call blocks for 250.0 ms, "
            "latency only");
  EXPECT_EQ(Recommend(Walking(v1::RISK_NONE, 0.0025)),
            "safe to attach: 2.5 ms");
  p = Walking(v1::RISK_UNKNOWN, 3);
  p.mutable_basis()->set_confidence(0.4);
  EXPECT_EQ(Recommend(p),
            "unknown: inputs missing (confidence 0.40); estimate 3.00 s");
}

// The seed's 400,000-thread PREEMPT_LAZY walk, 221.80 s under ftrace_lock:
// latency only for the attaching CPU, but 1.85x the 120 s hung-task
// timeout. The hung-task check is said on its own, never as the worst
// stall check, and only when the hold reaches the timeout.
TEST(RecommendTest, HungTaskSaidOnItsOwn) {
  v1::AttachPrediction p = Walking(v1::RISK_LATENCY, 221.80);
  AddCheck(&p, v1::ThresholdCheck::KIND_HUNG_TASK, 120, 1.848, true, false);
  p.set_hung_task(v1::HUNG_TASK_RISK_REPORTED);
  EXPECT_EQ(Recommend(p),
            "attach outside peak: the attaching call blocks for 221.80 s, "
            "latency only; tasks waiting for ftrace_lock (other tracers, BPF "
            "attaches) are reported hung after 120.00 s");
  p.set_hung_task(v1::HUNG_TASK_RISK_PANIC);
  p.mutable_checks(0)->set_panics(true);
  EXPECT_EQ(Recommend(p),
            "attach outside peak: the attaching call blocks for 221.80 s, "
            "latency only; tasks waiting for ftrace_lock (other tracers, BPF "
            "attaches) are reported hung after 120.00 s, and the host panics "
            "on it (hung_task_panic)");
  // Below the timeout: nothing said.
  p.set_hung_task(v1::HUNG_TASK_RISK_NONE);
  p.mutable_checks(0)->set_margin(0.999);
  EXPECT_EQ(Recommend(p),
            "attach outside peak: the attaching call blocks for 221.80 s, "
            "latency only");
  // A stall: the soft lockup is named though the hung-task margin is
  // larger (a watchdog_thresh of 150 s).
  v1::AttachPrediction s = Walking(v1::RISK_STALL, 400);
  AddCheck(&s, v1::ThresholdCheck::KIND_SOFT_LOCKUP, 300, 1.33, true, false);
  AddCheck(&s, v1::ThresholdCheck::KIND_HUNG_TASK, 120, 3.33, true, false);
  s.set_hung_task(v1::HUNG_TASK_RISK_REPORTED);
  EXPECT_EQ(Recommend(s),
            "do not attach now: 400.00 s without yielding crosses the "
            "soft-lockup threshold (300.00 s); attach while another fgraph "
            "user is active, or on a preemptible kernel; tasks waiting for "
            "ftrace_lock (other tracers, BPF attaches) are reported hung "
            "after 120.00 s");
}

}  // namespace
}  // namespace tracehealth::server
