#include "common/models/fgraph/fgraph_attach.h"

#include <cmath>
#include <string>

#include "common/enum_names.h"
#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::HostSnapshot Host(const std::string& release, v1::PreemptMode mode,
                      uint64_t threads) {
  v1::HostSnapshot s = testing::FgraphHost(release, mode, threads);
  s.mutable_fgraph()->set_available_filter_functions(60000);
  return s;
}

// Seed 000's table: 60-core Sapphire Rapids, PREEMPT_LAZY, every thread
// spawned while fgraph was inactive (all NULL).
struct SeedRow {
  uint64_t harness_threads;
  // Threads besides the harness's own. The measured pass counts pin them
  // down per run: ceil((100000 + k) / 32) = 3126 needs k in 1..32, while
  // ceil((200000 + k) / 32) = 6253 and ceil((400000 + k) / 32) = 12503 need
  // k in 65..96, so no single constant fits every row (the runs had
  // different numbers of helper/kernel threads alive). We take 20 for the
  // 100k run and 80 for the 200k and 400k runs; the batch-1024 rows accept
  // any of these.
  uint64_t other_threads;
  uint32_t batch;
  uint64_t passes;
  double seconds;
};

constexpr SeedRow kSeedRows[] = {
    {100000, 20, 32, 3126, 15.3},   {200000, 80, 32, 6253, 59.1},
    {400000, 80, 32, 12503, 227.8}, {100000, 20, 1024, 98, 0.44},
    {200000, 80, 1024, 196, 1.61},  {400000, 80, 1024, 391, 7.25},
};

TEST(FgraphAttachTest, ReproducesSeed000TableWithOneCVisit) {
  for (const SeedRow& row : kSeedRows) {
    const uint64_t n = row.harness_threads + row.other_threads;
    v1::HostSnapshot s = Host("6.18.2", v1::PREEMPT_MODE_LAZY, n);
    ModelOptions options;
    options.batch = row.batch;
    // The seed timed the fgraph 0 -> 1 transition itself, not the patching.
    options.sites = 0;
    v1::AttachPrediction p =
        PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
    SCOPED_TRACE(::testing::Message()
                 << row.harness_threads << " threads, B=" << row.batch);
    EXPECT_TRUE(p.uses_fgraph());
    EXPECT_EQ(p.null_threads(), n);
    EXPECT_EQ(p.passes(), row.passes);
    EXPECT_NEAR(p.latency_seconds() / row.seconds, 1.0, 0.10)
        << "predicted " << p.latency_seconds() << " s";
    // PREEMPT_LAZY: latency only.
    EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
    for (const auto& check : p.checks()) EXPECT_FALSE(check.applies());
  }
}

TEST(FgraphAttachTest, Seed000PreemptNoneRunIsASoftLockup) {
  // 6.16 PREEMPT_NONE, 240,000 idle threads: 51-55 s, soft lockup 3 of 3.
  v1::HostSnapshot s = Host("6.16.0", v1::PREEMPT_MODE_NONE, 240000);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  bool soft_lockup = false;
  for (const auto& check : p.checks()) {
    if (check.kind() == v1::ThresholdCheck::KIND_SOFT_LOCKUP) {
      soft_lockup = true;
      EXPECT_TRUE(check.applies());
      EXPECT_DOUBLE_EQ(check.threshold(), 20.0);
      EXPECT_GT(check.margin(), 1.0);
    }
  }
  EXPECT_TRUE(soft_lockup);
  ASSERT_TRUE(p.has_threads_at_stall());
  EXPECT_LT(p.threads_at_stall(), 240000);
}

TEST(FgraphAttachTest, Seed000LazyBatch1024IsLatencyOnly) {
  v1::HostSnapshot s = Host("6.18.2", v1::PREEMPT_MODE_LAZY, 400080);
  ModelOptions options;
  options.batch = 1024;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, options);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
  EXPECT_GT(p.latency_seconds(), 6.0);
  EXPECT_FALSE(p.has_threads_at_stall());
}

struct MatrixCase {
  const char* release;
  v1::ProbeKind kind;
  bool uses_fgraph;
};

TEST(FgraphAttachTest, ProbeKindByKernelMatrix) {
  const MatrixCase cases[] = {
      {"6.13.0", v1::PROBE_KIND_KPROBE_MULTI, false},
      {"6.14.0", v1::PROBE_KIND_KPROBE_MULTI, true},
      {"6.18.2", v1::PROBE_KIND_KPROBE_MULTI, true},
      {"6.18.35", v1::PROBE_KIND_KPROBE_MULTI, false},
      {"6.19", v1::PROBE_KIND_KPROBE_MULTI, false},
      {"6.19", v1::PROBE_KIND_FPROBE_EVENT, false},
      {"6.18.2", v1::PROBE_KIND_FPROBE_EVENT, true},
      {"6.13.0", v1::PROBE_KIND_KPROBE_MULTI_RETURN, false},
      {"6.14.0", v1::PROBE_KIND_KPROBE_MULTI_RETURN, true},
      {"6.19", v1::PROBE_KIND_KPROBE_MULTI_RETURN, true},
      {"6.19", v1::PROBE_KIND_KPROBE_SESSION, true},
      {"6.19", v1::PROBE_KIND_FPROBE_RETURN_EVENT, true},
      {"6.1.0", v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, true},
      {"6.19", v1::PROBE_KIND_FUNCTION_PROFILER, true},
      {"6.19", v1::PROBE_KIND_GRAPH_LATENCY_TRACER, true},
      {"6.13.0", v1::PROBE_KIND_KRETPROBE, false},
      {"6.18.2", v1::PROBE_KIND_KRETPROBE, false},
      {"6.19", v1::PROBE_KIND_KRETPROBE, false},
      {"6.13.0", v1::PROBE_KIND_FENTRY_FEXIT, false},
      {"6.18.2", v1::PROBE_KIND_FENTRY_FEXIT, false},
      {"6.19", v1::PROBE_KIND_FENTRY_FEXIT, false},
  };
  for (const MatrixCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.release << " " << ProbeKindName(c.kind));
    v1::HostSnapshot s = Host(c.release, v1::PREEMPT_MODE_NONE, 400000);
    v1::AttachPrediction p = PredictFgraphAttach(s, c.kind, {});
    EXPECT_EQ(p.uses_fgraph(), c.uses_fgraph);
    if (c.uses_fgraph) {
      // The full walk: minutes at 400k threads with B = 32.
      EXPECT_EQ(p.passes(), 12500u);
      EXPECT_GT(p.walk_seconds(), 100.0);
      EXPECT_EQ(p.risk(), v1::RISK_STALL);
    } else {
      // Costs nothing but its own patching.
      EXPECT_EQ(p.passes(), 0u);
      EXPECT_EQ(p.walk_seconds(), 0.0);
      EXPECT_DOUBLE_EQ(p.latency_seconds(), p.patch_seconds());
      EXPECT_LT(p.latency_seconds(), 0.01);
      EXPECT_EQ(p.risk(), v1::RISK_NONE);
    }
    // Numbers only: the explanation is fgraph_explain's.
    EXPECT_TRUE(p.summary().empty());
    EXPECT_EQ(p.basis().inputs_size(), 0);
  }
}

TEST(FgraphAttachTest, FgraphAlreadyActiveMeansNoWalk) {
  v1::HostSnapshot s = Host("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_fgraph()->set_active(true);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_TRUE(p.fgraph_already_active());
  EXPECT_EQ(p.passes(), 0u);
  EXPECT_EQ(p.walk_seconds(), 0.0);
  EXPECT_NEAR(p.patch_seconds(), 60000 * 1e-6, 1e-9);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

TEST(FgraphAttachTest, NullThreadsBoundFromSnapshot) {
  v1::HostSnapshot s = Host("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_fgraph()->set_null_threads_bound(3200);
  s.mutable_fgraph()->set_null_threads_basis("fork delta");
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.null_threads(), 3200u);
  // 3200 is a multiple of 32 and served tasks follow: one empty pass more.
  EXPECT_EQ(p.passes(), 101u);
  // V ~ N_total * N_null / (2B) + the empty pass's full walk.
  const double expected = 400000.0 * 3200 / 64 + 400000;
  EXPECT_NEAR(p.visits() / expected, 1.0, 0.03);
  EXPECT_NEAR(p.longest_pass_seconds(), 400000 * FgraphConstants{}.c_visit,
              1e-9);
  EXPECT_LT(p.risk(), v1::RISK_WARNING);
}

TEST(FgraphAttachTest, WalkArithmetic) {
  // All NULL: sum over passes of (i+1)*B + 1, then the full list.
  WalkCost w = ShadowStackWalk(100, 100, 32);
  EXPECT_EQ(w.passes, 4u);  // 32, 64, 96, then 4 more
  EXPECT_DOUBLE_EQ(w.visits, (33 + 65 + 97) + 100);
  // Exact multiple with nothing after it: no extra pass.
  w = ShadowStackWalk(64, 64, 32);
  EXPECT_EQ(w.passes, 2u);
  EXPECT_DOUBLE_EQ(w.visits, 33 + 64);
  // No NULL task: one pass over the whole list.
  w = ShadowStackWalk(500, 0, 32);
  EXPECT_EQ(w.passes, 1u);
  EXPECT_DOUBLE_EQ(w.visits, 500);
  // Large N: N^2 / (2B).
  w = ShadowStackWalk(400000, 400000, 32);
  EXPECT_NEAR(w.visits / (400000.0 * 400000 / 64), 1.0, 0.001);
}

TEST(FgraphAttachTest, InverseSolvesTheQuadratic) {
  FgraphConstants c;
  for (double seconds : {0.5, 20.0, 21.0, 300.0}) {
    for (uint32_t batch : {32u, 1024u}) {
      double n = ThreadsForWalkSeconds(seconds, batch, c);
      EXPECT_NEAR(WalkSecondsAllNull(n, batch, c) / seconds, 1.0, 1e-9);
    }
  }
  // 20 s at B = 32: about sqrt(20 * 64 / c_visit) threads.
  EXPECT_NEAR(ThreadsForWalkSeconds(20, 32, c) / std::sqrt(20 * 64 / c.c_visit),
              1.0, 0.01);
  EXPECT_EQ(ThreadsForWalkSeconds(0, 32, c), 0);
}

TEST(FgraphAttachTest, LatencyBudgetInverse) {
  v1::HostSnapshot s = Host("6.18.2", v1::PREEMPT_MODE_FULL, 100000);
  ModelOptions options;
  options.latency_budget_seconds = 1.0;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  ASSERT_TRUE(p.has_threads_at_latency_budget());
  EXPECT_NEAR(
      WalkSecondsAllNull(p.threads_at_latency_budget(), 32, FgraphConstants{}),
      1.0, 1e-6);
  bool has_latency_check = false;
  for (const auto& check : p.checks()) {
    if (check.kind() == v1::ThresholdCheck::KIND_LATENCY) {
      has_latency_check = true;
      EXPECT_GT(check.margin(), 1.0);
    }
  }
  EXPECT_TRUE(has_latency_check);
}

TEST(FgraphAttachTest, UnknownInputsAreExplicit) {
  v1::HostSnapshot s;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  EXPECT_LT(p.basis().confidence(), 0.8);
  // Unknown preemption with a walk that would stall a non-preemptible kernel.
  s = Host("6.18.2", v1::PREEMPT_MODE_UNKNOWN, 400000);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  // Unknown release for an fprobe kind: worst case, risk unknown.
  s = Host("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_kernel()->clear_release();
  p = PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, {});
  EXPECT_TRUE(p.uses_fgraph());
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  // Every prediction says where its inputs came from.
  bool assumed_null = false;
  s = Host("6.18.2", v1::PREEMPT_MODE_NONE, 1000);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  const KernelFeatures features =
      ResolveKernelFeatures(s.kernel(), FeatureTable::Builtin());
  const AttachCase k = MakeAttachCase(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER,
                                      {}, MakeAttachContext(s, {}, features));
  for (const AttachInputs::Entry& e : k.inputs) {
    if (e.id == AttachInput::kNullThreads)
      assumed_null = e.source == v1::INPUT_SOURCE_DEFAULT;
  }
  EXPECT_TRUE(assumed_null);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

// Confidence = 1 - 0.1 per default input - 0.3 per unknown one, over the
// inputs the basis lists.
TEST(FgraphAttachTest, ConfidenceCountsAssumedInputs) {
  // Everything measured: release, available_filter_functions, preemption,
  // both thresholds, fgraph.active, threads.total; batch derived from the
  // release; N_null bounded by the agent (derived).
  v1::HostSnapshot s = Host("6.18.2", v1::PREEMPT_MODE_NONE, 1000);
  s.mutable_thresholds()->set_watchdog_thresh_seconds(10);
  s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(21);
  s.mutable_fgraph()->set_null_threads_bound(10);
  EXPECT_DOUBLE_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {})
          .basis()
          .confidence(),
      1.0);
  // Defaults: both thresholds and N_null: 1 - 0.1 - 0.1 - 0.1.
  s = Host("6.18.2", v1::PREEMPT_MODE_NONE, 1000);
  EXPECT_DOUBLE_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {})
          .basis()
          .confidence(),
      1.0 - 0.1 - 0.1 - 0.1);
  // No release for an fprobe kind: the default sites (100), preemption
  // measured, thresholds and batch default, and the release unknown:
  // 1 - 4 * 0.1 - 0.3 with N_null default too, i.e. 5 defaults.
  s.mutable_kernel()->clear_release();
  EXPECT_DOUBLE_EQ(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, {})
                       .basis()
                       .confidence(),
                   1.0 - 0.1 - 0.1 - 0.1 - 0.1 - 0.1 - 0.3);
  // kretprobe: no walk, nothing assumed.
  EXPECT_DOUBLE_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, {}).basis().confidence(),
      1.0);
}

TEST(FgraphAttachTest, ConfigOffMakesKindUnavailable) {
  v1::HostSnapshot s = Host("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_kernel()->set_config_fprobe(false);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, {});
  EXPECT_FALSE(p.uses_fgraph());
  EXPECT_EQ(p.latency_seconds(), 0.0);
}

}  // namespace
}  // namespace tracehealth
