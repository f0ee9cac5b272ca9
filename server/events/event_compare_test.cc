#include "server/events/event_compare.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

v1::AttachPrediction* Attach(v1::HostReport* r, v1::ProbeKind kind,
                             bool uses_fgraph, v1::Risk risk,
                             double latency_seconds) {
  v1::AttachPrediction* a = r->mutable_predictions()->add_attach();
  a->set_probe_kind(kind);
  a->set_uses_fgraph(uses_fgraph);
  a->set_risk(risk);
  a->set_latency_seconds(latency_seconds);
  return a;
}

// Seed 000's shape: kprobe_multi_return predicted to stall (31 s walk),
// the function_graph tracer only warned, fentry never uses fgraph.
v1::HostReport Prediction() {
  v1::HostReport r;
  Attach(&r, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, true, v1::RISK_WARNING, 9);
  Attach(&r, v1::PROBE_KIND_KPROBE_MULTI, true, v1::RISK_LATENCY, 2);
  Attach(&r, v1::PROBE_KIND_KPROBE_MULTI_RETURN, true, v1::RISK_STALL, 31);
  Attach(&r, v1::PROBE_KIND_FENTRY_FEXIT, false, v1::RISK_NONE, 0);
  v1::VmapPurgePrediction* v = r.mutable_predictions()->mutable_vmap_purge();
  v->set_applies(true);
  v->set_risk(v1::RISK_LATENCY);
  v->set_purge_seconds(4.5);
  return r;
}

v1::ObservedEvent Lockup(v1::EventModel model) {
  v1::ObservedEvent e;
  e.set_kind(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  e.set_seconds(22);
  e.set_model(model);
  return e;
}

TEST(EventCompareTest, FgraphTakesTheWorstOfTheEventsProbeKinds) {
  const v1::HostReport p = Prediction();
  v1::ObservedEvent e = Lockup(v1::EVENT_MODEL_FGRAPH_ATTACH);
  // kprobe_multi (LATENCY) and kprobe_multi_return (STALL): STALL.
  e.add_probe_kinds(v1::PROBE_KIND_KPROBE_MULTI);
  e.add_probe_kinds(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  EventComparison c = CompareEvent(e, &p);
  EXPECT_EQ(c.predicted, v1::EVENT_PREDICTION_YES);
  EXPECT_EQ(c.risk, v1::RISK_STALL);
  // kprobe_multi alone said LATENCY: a miss.
  e.clear_probe_kinds();
  e.add_probe_kinds(v1::PROBE_KIND_KPROBE_MULTI);
  c = CompareEvent(e, &p);
  EXPECT_EQ(c.predicted, v1::EVENT_PREDICTION_NO);
  EXPECT_EQ(c.risk, v1::RISK_LATENCY);
  // The function_graph tracer's WARNING counts as predicted.
  e.clear_probe_kinds();
  e.add_probe_kinds(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_EQ(CompareEvent(e, &p).predicted, v1::EVENT_PREDICTION_YES);
}

TEST(EventCompareTest, NoProbeKindsMeansEveryKindThatUsesFgraph) {
  v1::HostReport p = Prediction();
  v1::ObservedEvent e = Lockup(v1::EVENT_MODEL_FGRAPH_ATTACH);
  // WARNING, LATENCY, STALL over the fgraph kinds (fentry's NONE is not
  // one of them): STALL.
  EventComparison c = CompareEvent(e, &p);
  EXPECT_EQ(c.predicted, v1::EVENT_PREDICTION_YES);
  EXPECT_EQ(c.risk, v1::RISK_STALL);
  // All fgraph kinds at NONE or LATENCY: a miss, with the worst (LATENCY).
  for (v1::AttachPrediction& a : *p.mutable_predictions()->mutable_attach()) {
    if (a.uses_fgraph()) a.set_risk(v1::RISK_LATENCY);
  }
  p.mutable_predictions()->mutable_attach(0)->set_risk(v1::RISK_NONE);
  c = CompareEvent(e, &p);
  EXPECT_EQ(c.predicted, v1::EVENT_PREDICTION_NO);
  EXPECT_EQ(c.risk, v1::RISK_LATENCY);
}

TEST(EventCompareTest, UnknownWithoutSomethingToCompare) {
  const v1::HostReport p = Prediction();
  // No report.
  EXPECT_EQ(
      CompareEvent(Lockup(v1::EVENT_MODEL_FGRAPH_ATTACH), nullptr).predicted,
      v1::EVENT_PREDICTION_UNKNOWN);
  // Unattributed, and the depot (which predicts exhaustion, not stalls).
  EXPECT_EQ(CompareEvent(Lockup(v1::EVENT_MODEL_UNATTRIBUTED), &p).predicted,
            v1::EVENT_PREDICTION_UNKNOWN);
  EXPECT_EQ(CompareEvent(Lockup(v1::EVENT_MODEL_STACK_DEPOT), &p).predicted,
            v1::EVENT_PREDICTION_UNKNOWN);
  // A probe kind the report has no prediction for.
  v1::ObservedEvent e = Lockup(v1::EVENT_MODEL_FGRAPH_ATTACH);
  e.add_probe_kinds(v1::PROBE_KIND_FPROBE_EVENT);
  EventComparison c = CompareEvent(e, &p);
  EXPECT_EQ(c.predicted, v1::EVENT_PREDICTION_UNKNOWN);
  EXPECT_EQ(c.risk, v1::RISK_UNKNOWN);
  // Its prediction is RISK_UNKNOWN.
  v1::HostReport q = Prediction();
  Attach(&q, v1::PROBE_KIND_FPROBE_EVENT, true, v1::RISK_UNKNOWN, 0);
  EXPECT_EQ(CompareEvent(e, &q).predicted, v1::EVENT_PREDICTION_UNKNOWN);
  // A purge model that does not apply (no KASAN_VMALLOC).
  q.mutable_predictions()->mutable_vmap_purge()->set_applies(false);
  EXPECT_EQ(CompareEvent(Lockup(v1::EVENT_MODEL_VMAP_PURGE), &q).predicted,
            v1::EVENT_PREDICTION_UNKNOWN);
}

TEST(EventCompareTest, VmapPurgeTakesThePurgesRisk) {
  v1::HostReport p = Prediction();
  EventComparison c = CompareEvent(Lockup(v1::EVENT_MODEL_VMAP_PURGE), &p);
  EXPECT_EQ(c.predicted, v1::EVENT_PREDICTION_NO);  // LATENCY: a miss
  EXPECT_EQ(c.risk, v1::RISK_LATENCY);
  p.mutable_predictions()->mutable_vmap_purge()->set_risk(v1::RISK_WARNING);
  EXPECT_EQ(CompareEvent(Lockup(v1::EVENT_MODEL_VMAP_PURGE), &p).predicted,
            v1::EVENT_PREDICTION_YES);
}

TEST(EventCompareTest, AHungTaskIsPredictedByALatencyAsLongAsItsBlock) {
  const v1::HostReport p = Prediction();  // purge 4.5 s, risk LATENCY
  v1::ObservedEvent e;
  e.set_kind(v1::OBSERVED_EVENT_KIND_HUNG_TASK);
  e.set_model(v1::EVENT_MODEL_VMAP_PURGE);
  e.set_seconds(4);  // 4.5 >= 4: predicted
  EXPECT_EQ(CompareEvent(e, &p).predicted, v1::EVENT_PREDICTION_YES);
  e.set_seconds(5);  // 4.5 < 5: a miss
  EXPECT_EQ(CompareEvent(e, &p).predicted, v1::EVENT_PREDICTION_NO);
  // A soft lockup is not predicted by a latency, however long.
  v1::ObservedEvent lockup = Lockup(v1::EVENT_MODEL_VMAP_PURGE);
  lockup.set_seconds(4);
  EXPECT_EQ(CompareEvent(lockup, &p).predicted, v1::EVENT_PREDICTION_NO);
  // kprobe_multi: 2 s LATENCY against 120 s blocked: a miss; 2 s: yes.
  e.set_model(v1::EVENT_MODEL_FGRAPH_ATTACH);
  e.add_probe_kinds(v1::PROBE_KIND_KPROBE_MULTI);
  e.set_seconds(120);
  EXPECT_EQ(CompareEvent(e, &p).predicted, v1::EVENT_PREDICTION_NO);
  e.set_seconds(2);
  EXPECT_EQ(CompareEvent(e, &p).predicted, v1::EVENT_PREDICTION_YES);
}

}  // namespace
}  // namespace tracehealth::server
