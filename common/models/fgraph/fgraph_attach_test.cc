#include "common/models/fgraph/fgraph_attach.h"

#include <cmath>
#include <optional>
#include <string>

#include "common/enum_names.h"
#include "common/models/testing/model_hosts.h"
#include "common/models/testing/prediction_checks.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// The batch-size thread's table: 60-core Sapphire Rapids, PREEMPT_DYNAMIC
// booted lazy (a CONFIG_PREEMPTION build), every thread spawned while
// fgraph was inactive (all NULL).
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

TEST(FgraphAttachTest, ReproducesTheSixLazyRows) {
  for (const SeedRow& row : kSeedRows) {
    const uint64_t n = row.harness_threads + row.other_threads;
    v1::HostSnapshot s =
        testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_LAZY, n);
    s.mutable_kernel()->set_preempt_dynamic(true);
    // Its 112.5 MiB L3 holds 921,600 tasks at 128 B: every pass fits, so
    // the seed's level beyond the L3 changes no row.
    s.mutable_cpus()->set_l3_cache_bytes(117964800);
    ModelOptions options;
    options.batch = row.batch;
    // The thread timed the fgraph 0 -> 1 transition itself, not patching.
    options.sites = 0;
    v1::AttachPrediction p =
        PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
    SCOPED_TRACE(::testing::Message()
                 << row.harness_threads << " threads, B=" << row.batch);
    EXPECT_TRUE(p.uses_fgraph());
    EXPECT_EQ(p.null_threads(), n);
    EXPECT_EQ(p.passes(), row.passes);
    // 88.7 ns per visit: every row within +-10 %.
    EXPECT_NEAR(p.latency_seconds() / row.seconds, 1.0, 0.10)
        << "predicted " << p.latency_seconds() << " s";
    // PREEMPT_DYNAMIC lazy, PREEMPT_RCU: nothing non-yielding, one pass
    // without a quiescent state; latency only.
    EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
    EXPECT_DOUBLE_EQ(p.non_yielding_seconds(), 0);
    const v1::ThresholdCheck* rcu =
        testing::FindCheck(p, v1::ThresholdCheck::KIND_RCU_STALL);
    ASSERT_NE(rcu, nullptr);
    EXPECT_TRUE(rcu->applies());
    EXPECT_DOUBLE_EQ(rcu->predicted(), 88.7e-9 * n + 2e-6);
    EXPECT_FALSE(p.has_threads_at_stall());
  }
}

// The thread's 6.16 PREEMPT_NONE run (a static build, no PREEMPT_RCU):
// 240,000 idle threads, 51.3-54.6 s, soft lockups in 3 of 3 runs.
TEST(FgraphAttachTest, ReproducesTheStaticNoneRunWithItsOwnConstant) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.16.0", v1::PREEMPT_MODE_NONE, 240080);
  s.mutable_kernel()->set_preempt_dynamic(false);
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  // V = 32 * 7502 * 7503 / 2 + 7502 + 240,080 = 900,847,678 visits;
  // 58.7e-9 * V + 2e-6 * 7503 + 20e-9 * 240,080 = 52.90 s.
  EXPECT_EQ(p.passes(), 7503u);
  EXPECT_DOUBLE_EQ(p.visits(), 900847678);
  EXPECT_NEAR(p.latency_seconds(), 52.8996, 1e-3);
  EXPECT_NEAR(p.latency_seconds() / 51.3, 1.0, 0.15);
  EXPECT_NEAR(p.latency_seconds() / 54.6, 1.0, 0.15);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  // Both watchdogs: the whole walk has no reschedule point and no QS.
  const v1::ThresholdCheck* soft =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_SOFT_LOCKUP);
  const v1::ThresholdCheck* rcu =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_RCU_STALL);
  ASSERT_TRUE(soft && rcu);
  EXPECT_DOUBLE_EQ(soft->threshold(), 20.0);
  EXPECT_NEAR(soft->margin(), 52.8996 / 20, 1e-4);
  EXPECT_NEAR(rcu->margin(), 52.8996 / 21, 1e-4);
  // Stall threshold at 147,607 all-NULL threads (the fit the 6.16 run
  // gives), not the 120,082 the LAZY constant gives.
  ASSERT_TRUE(p.has_threads_at_stall());
  EXPECT_NEAR(p.threads_at_stall(), 147606.9, 0.5);
  // One constant for all seven runs cannot hold: 88.7 ns predicts 79.9 s,
  // 46 % over the slowest run.
  options.c_visit_seconds = 88.7e-9;
  EXPECT_GT(
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options)
              .latency_seconds() /
          54.6,
      1.15);
}

// The same 6.16 host with 400,000 all-NULL threads under every preemption
// model. B = 32: 12,500 passes, V = 12,499 + 32 * 12,499 * 12,500 / 2 +
// 400,000 = 2,500,212,499 visits. A static NONE/VOLUNTARY build walks at
// 58.7 ns, every other at 88.7 ns; c_pass 2 us, c_alloc 20 ns.
TEST(FgraphAttachTest, EveryPreemptionModel) {
  const double v = 2500212499.0;
  const double fixed = 2e-6 * 12500 + 20e-9 * 400000;  // 0.033 s
  const double static_walk = 58.7e-9 * v + fixed;      // 146.80 s
  const double walk = 88.7e-9 * v + fixed;             // 221.80 s
  const double static_pass = 58.7e-9 * 400000 + 2e-6;  // 23.48 ms
  const double pass = 88.7e-9 * 400000 + 2e-6;         // 35.48 ms
  struct Case {
    const char* name;
    v1::PreemptMode mode;
    std::optional<bool> dynamic;
    double latency;
    double non_yielding;
    v1::Risk risk;
  };
  const Case cases[] = {
      // Nothing in the walk reschedules: a soft lockup.
      {"static none", v1::PREEMPT_MODE_NONE, false, static_walk, static_walk,
       v1::RISK_STALL},
      {"dynamic none", v1::PREEMPT_MODE_NONE, true, walk, walk, v1::RISK_STALL},
      // Each pass's allocations reschedule: one pass at a time.
      {"static voluntary", v1::PREEMPT_MODE_VOLUNTARY, false, static_walk,
       static_pass, v1::RISK_LATENCY},
      {"dynamic voluntary", v1::PREEMPT_MODE_VOLUNTARY, true, walk, pass,
       v1::RISK_LATENCY},
      // Preemptible, under preemptible RCU: nothing non-yielding.
      {"full", v1::PREEMPT_MODE_FULL, std::nullopt, walk, 0, v1::RISK_LATENCY},
      {"dynamic lazy", v1::PREEMPT_MODE_LAZY, true, walk, 0, v1::RISK_LATENCY},
      {"rt", v1::PREEMPT_MODE_RT, std::nullopt, walk, 0, v1::RISK_LATENCY},
      // Unknown: taken as none, which would stall, so the answer is unknown.
      {"unknown", v1::PREEMPT_MODE_UNKNOWN, std::nullopt, walk, walk,
       v1::RISK_UNKNOWN},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    v1::HostSnapshot s = testing::FgraphAttachHost("6.16.0", c.mode, 400000);
    if (c.dynamic) s.mutable_kernel()->set_preempt_dynamic(*c.dynamic);
    ModelOptions options;
    options.sites = 0;
    v1::AttachPrediction p =
        PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
    EXPECT_EQ(p.passes(), 12500u);
    EXPECT_DOUBLE_EQ(p.visits(), v);
    EXPECT_NEAR(p.latency_seconds(), c.latency, 1e-6);
    EXPECT_NEAR(p.non_yielding_seconds(), c.non_yielding, 1e-9);
    EXPECT_EQ(p.risk(), c.risk);
  }
}

// A Debian 6.1 kernel, PREEMPT_DYNAMIC and voluntary by default, walked
// for well over 100 s with 128k threads and logged neither a soft lockup
// nor an RCU stall: each pass's GFP_KERNEL allocations reschedule.
TEST(FgraphAttachTest, VoluntaryIsLatencyNotALockup) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.1.0", v1::PREEMPT_MODE_VOLUNTARY, 128000);
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  // V = 256,067,999; 88.7e-9 * V + 2e-6 * 4000 + 20e-9 * 128,000 = 22.72 s.
  EXPECT_NEAR(p.latency_seconds(), 22.7238, 1e-3);
  // The longest stretch is one pass: 88.7e-9 * 128,000 + 2e-6 = 11.36 ms.
  EXPECT_NEAR(p.non_yielding_seconds(), 0.0113556, 1e-9);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
  const v1::ThresholdCheck* soft =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_SOFT_LOCKUP);
  ASSERT_NE(soft, nullptr);
  EXPECT_TRUE(soft->applies());
  EXPECT_NEAR(soft->margin(), 0.0113556 / 20, 1e-9);
  // A single pass would reach 20 s only at (20 - 2e-6) / 88.7e-9 = 225 M
  // threads, beyond PID_MAX_LIMIT: no stall inverse.
  EXPECT_FALSE(p.has_threads_at_stall());
  // c_visit would have to be (20 - 2e-6) / (88.7e-9 * 128,000) = 1761.6x.
  ASSERT_TRUE(p.has_c_visit_factor_to_stall());
  EXPECT_NEAR(p.c_visit_factor_to_stall(), 1761.56, 0.01);
  // The same host on PREEMPT_NONE locks up.
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options)
          .risk(),
      v1::RISK_STALL);
}

// PREEMPT_DYNAMIC booted preempt=none keeps CONFIG_PREEMPT_RCU=y: soft
// lockups, no RCU stall.
TEST(FgraphAttachTest, DynamicBootedNoneLocksUpWithoutAnRcuStall) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.1.0", v1::PREEMPT_MODE_NONE, 200000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_kernel()->set_config_preempt_rcu(true);
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  // V = 625,106,249: 88.7e-9 * V + 2e-6 * 6250 + 20e-9 * 200,000 = 55.46 s.
  EXPECT_NEAR(p.latency_seconds(), 55.4634, 1e-3);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  const v1::ThresholdCheck* soft =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_SOFT_LOCKUP);
  const v1::ThresholdCheck* rcu =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_RCU_STALL);
  ASSERT_TRUE(soft && rcu);
  EXPECT_GT(soft->margin(), 1.0);
  // One pass without a QS: 88.7e-9 * 200,000 + 2e-6 = 17.74 ms.
  EXPECT_NEAR(rcu->predicted(), 0.017742, 1e-9);
  EXPECT_LT(rcu->margin(), 0.01);
  // Without PREEMPT_RCU (a static NONE build) the walk is an RCU stall too.
  s.mutable_kernel()->set_preempt_dynamic(false);
  s.mutable_kernel()->set_config_preempt_rcu(false);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_GT(testing::FindCheck(p, v1::ThresholdCheck::KIND_RCU_STALL)->margin(),
            1.0);
}

// A QEMU TCG guest (Debian 6.1, preempt=none, 64,000 threads) logged a
// 22 s soft lockup in register_ftrace_graph while the fitted constant says
// 5.7 s: its visits cost 4.6-7.5x the fit. The verdict names the factor.
TEST(FgraphAttachTest, EmulatedCpuNamesHowFarTheConstantMayBeOff) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.1.0", v1::PREEMPT_MODE_NONE, 64000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_kernel()->set_config_preempt_rcu(true);
  s.mutable_thresholds()->set_watchdog_thresh_seconds(10);
  s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(21);
  s.mutable_fgraph()->set_ftrace_filter_functions(0);
  s.mutable_fgraph()->set_null_threads_bound(64000);
  s.mutable_cpus()->set_model_name("QEMU TCG CPU version 2.5+");
  s.mutable_cpus()->set_hypervisor(true);
  // 16 MiB of L3: 131,072 tasks, more than the 64,000 walked.
  s.mutable_cpus()->set_l3_cache_bytes(16 << 20);
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  // V = 64,033,999; 88.7e-9 * V + 2e-6 * 2000 + 20e-9 * 64,000 = 5.685 s.
  EXPECT_NEAR(p.latency_seconds(), 5.6851, 1e-3);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);  // margin 0.28
  EXPECT_EQ(p.cpu_class(), v1::CPU_CLASS_EMULATED);
  // (20 - 2e-6 * 2000 - 20e-9 * 64,000) / (88.7e-9 * V) = 3.52.
  ASSERT_TRUE(p.has_c_visit_factor_to_stall());
  EXPECT_NEAR(p.c_visit_factor_to_stall(), 3.5203, 1e-3);
  // Every input measured or derived; the emulated CPU costs 0.4.
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 1.0 - 0.4);
  // On the fitted class the confidence is whole.
  s.mutable_cpus()->set_model_name("Intel(R) Xeon(R) Platinum 8480+");
  s.mutable_cpus()->set_hypervisor(false);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_EQ(p.cpu_class(), v1::CPU_CLASS_FITTED);
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 1.0);
  // A guest of the same CPU: 0.2.
  s.mutable_cpus()->set_hypervisor(true);
  EXPECT_DOUBLE_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options)
          .basis()
          .confidence(),
      1.0 - 0.2);
}

// A calibration's constants replace the seed c_visit and add the fixed
// cost to a first user's enable; they were measured on this CPU, so the
// emulated CPU costs no confidence. A what-if c_visit still wins.
TEST(FgraphAttachTest, CalibratedConstantsReplaceTheSeedValue) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.1.0", v1::PREEMPT_MODE_NONE, 64000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_kernel()->set_config_preempt_rcu(true);
  s.mutable_thresholds()->set_watchdog_thresh_seconds(10);
  s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(21);
  s.mutable_fgraph()->set_null_threads_bound(64000);
  s.mutable_cpus()->set_model_name("QEMU TCG CPU version 2.5+");
  s.mutable_cpus()->set_hypervisor(true);
  // 16 MiB of L3: 131,072 tasks, more than the 64,000 walked.
  s.mutable_cpus()->set_l3_cache_bytes(16 << 20);
  ModelOptions options;
  options.sites = 0;
  options.calibration = CalibratedConstants{400e-9, 0.1, "3 canaries of X"};
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  // V = 64,033,999 (above): walk = 400e-9 * V + 2e-6 * 2000 + 20e-9 *
  // 64,000 = 25.6135996 + 0.004 + 0.00128 = 25.6188796 s; + fixed 0.1 s.
  EXPECT_NEAR(p.walk_seconds(), 25.6188796, 1e-6);
  EXPECT_NEAR(p.latency_seconds(), 25.7188796, 1e-6);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  EXPECT_DOUBLE_EQ(p.basis().confidence(), 1.0);
  // A calibration that fitted 300 us a pass prices the 2,000 passes with
  // it: 25.6135996 + 0.6 + 0.00128 = 26.2148796 s; + fixed 0.1 s.
  options.calibration->c_pass_seconds = 300e-6;
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_NEAR(p.walk_seconds(), 26.2148796, 1e-6);
  EXPECT_NEAR(p.latency_seconds(), 26.3148796, 1e-6);
  // The what-if value wins, without the fixed cost or the calibration's
  // pass cost: 5.6851 s as above.
  options.c_visit_seconds = 88.7e-9;
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_NEAR(p.latency_seconds(), 5.6851, 1e-3);
}

// NULL-stack threads forked since fgraph was last active sit at the tail
// of the task list: 400,000 threads, 40,000 of them NULL, 2.26 s if they
// were at the head, 42.1 s at the tail (which the prediction uses).
TEST(FgraphAttachTest, ForkDeltaUsesTheTailBound) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_fgraph()->set_null_threads_bound(40000);
  s.mutable_fgraph()->set_null_threads_basis("fork delta");
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_EQ(p.null_threads(), 40000u);
  EXPECT_DOUBLE_EQ(p.visits(), 475021249);
  EXPECT_NEAR(p.walk_seconds(), 42.1377, 1e-3);
  EXPECT_NEAR(p.walk_seconds_low(), 2.2582, 1e-3);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  // At 400,000 threads 18,429 NULL ones already cross 20 s; an all-NULL
  // host crosses it at 120,082 threads. (One inverse for both used to say
  // "below it under 120082 NULL-stack threads".)
  ASSERT_TRUE(p.has_null_threads_at_stall());
  EXPECT_NEAR(p.null_threads_at_stall(), 18428.75, 0.1);
  ASSERT_TRUE(p.has_threads_at_stall());
  EXPECT_NEAR(p.threads_at_stall(), 120081.95, 0.1);
  EXPECT_NEAR(p.longest_pass_seconds(), 400000 * 88.7e-9, 1e-12);
}

TEST(FgraphAttachTest, ThreadCountsAbovePidMaxLimitAreInvalid) {
  // PID_MAX_LIMIT = 4 * 1024 * 1024 = 4,194,304 on 64-bit.
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_LAZY, 4194305);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.risk(), v1::RISK_UNKNOWN);
  EXPECT_EQ(p.threads_total(), 0u);
  EXPECT_EQ(p.passes(), 0u);
  s.mutable_threads()->set_total(4194304);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.threads_total(), 4194304u);
  EXPECT_EQ(p.passes(), 131072u);  // 4,194,304 / 32
}

// register_ftrace_graph() before 6.11: "we currently allow only one tracer
// registered at a time" -> -EBUSY. From 6.11 a new user walks every thread
// once under read_lock(&tasklist_lock) (init_task_vars).
TEST(FgraphAttachTest, SecondFgraphUser) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.10.14", v1::PREEMPT_MODE_FULL, 400000);
  s.mutable_fgraph()->set_active(true);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_PROFILER, {});
  EXPECT_TRUE(p.busy());
  EXPECT_EQ(p.patch_sites(), 0u);
  EXPECT_DOUBLE_EQ(p.latency_seconds(), 0);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  s.mutable_kernel()->set_release("6.11.0");
  ModelOptions options;
  options.sites = 0;
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_PROFILER, options);
  EXPECT_FALSE(p.busy());
  // One pass: 88.7e-9 * 400,000 + 2e-6 = 35.484 ms, preemption off even on
  // PREEMPT (full), and fork/exit waiting as long.
  EXPECT_EQ(p.passes(), 1u);
  EXPECT_NEAR(p.latency_seconds(), 0.035482, 1e-9);
  EXPECT_NEAR(p.non_yielding_seconds(), 0.035482, 1e-9);
  EXPECT_NEAR(p.fork_wait_seconds(), 0.035482, 1e-9);
  EXPECT_EQ(p.shadow_stack_bytes(), 0u);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
}

// Before 5.10 each pass held read_lock(&tasklist_lock): on PREEMPT (full)
// too, a pass is one non-preemptible stretch and forks wait for it.
TEST(FgraphAttachTest, TasklistLockPassesBefore510) {
  ModelOptions options;
  options.sites = 0;
  v1::HostSnapshot s =
      testing::FgraphAttachHost("5.9.16", v1::PREEMPT_MODE_FULL, 100000);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  // 88.7e-9 * 100,000 + 2e-6 = 8.872 ms.
  EXPECT_NEAR(p.non_yielding_seconds(), 0.008872, 1e-9);
  EXPECT_NEAR(p.fork_wait_seconds(), 0.008872, 1e-9);
  s.mutable_kernel()->set_release("5.10.0");
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  EXPECT_DOUBLE_EQ(p.non_yielding_seconds(), 0);
  EXPECT_DOUBLE_EQ(p.fork_wait_seconds(), 0);
}

TEST(FgraphAttachTest, ShadowStackMemory) {
  // 6.13+: 4096 B from fgraph_stack: 400,000 x 4096 = 1,638,400,000 B.
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.13.0", v1::PREEMPT_MODE_LAZY, 400000);
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.shadow_stack_size(), 4096u);
  EXPECT_EQ(p.shadow_stack_bytes(), 1638400000u);
  // 6.1: 50 entries from kmalloc-2048: 400,000 x 2048.
  s.mutable_kernel()->set_release("6.1.0");
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.shadow_stack_bytes(), 819200000u);
  // 6.12 with 64 KiB pages: kmalloc(PAGE_SIZE).
  s.mutable_kernel()->set_release("6.12.5");
  s.mutable_kernel()->set_page_size(65536);
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, {});
  EXPECT_EQ(p.shadow_stack_bytes(), 400000ull * 65536);
}

TEST(FgraphAttachTest, FgraphAlreadyActiveMeansNoWalk) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_NONE, 400000);
  s.mutable_fgraph()->set_active(true);
  ModelOptions options;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, options);
  EXPECT_TRUE(p.fgraph_already_active());
  // 6.18 has multi-user fgraph: one pass, no shadow-stack walk.
  EXPECT_EQ(p.passes(), 1u);
  EXPECT_EQ(p.shadow_stack_bytes(), 0u);
  EXPECT_LT(p.latency_seconds(), 0.05);
  EXPECT_EQ(p.risk(), v1::RISK_NONE);
  // kretprobes never touch fgraph.
  p = PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, options);
  EXPECT_EQ(p.passes(), 0u);
}

TEST(FgraphAttachTest, LatencyBudgetInverse) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.18.2", v1::PREEMPT_MODE_FULL, 100000);
  ModelOptions options;
  options.latency_budget_seconds = 1.0;
  options.sites = 0;
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, options);
  ASSERT_TRUE(p.has_threads_at_latency_budget());
  EXPECT_NEAR(WalkSecondsAllNull(p.threads_at_latency_budget(), 32,
                                 WalkConstantsFor(true)),
              1.0, 1e-6);
  const v1::ThresholdCheck* budget =
      testing::FindCheck(p, v1::ThresholdCheck::KIND_LATENCY);
  ASSERT_NE(budget, nullptr);
  EXPECT_GT(budget->margin(), 1.0);
}

// kprobe_multi entry on 6.19 (entry-only fprobes off fgraph: no walk),
// static PREEMPT_NONE, 1,000,000 sites at 1.069 s / 48,712 = 21.945 us:
// 21.945 s of patching in one ftrace update. On x86 ftrace_replace_code()
// has no reschedule point: a soft lockup (2 * watchdog_thresh 10 = 20 s,
// 1.097x). On arm64 it reschedules after each site: latency only.
TEST(FgraphAttachTest, PatchingManySitesOnANonPreemptibleX86Kernel) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.19.0", v1::PREEMPT_MODE_NONE, 1000);
  s.mutable_kernel()->set_preempt_dynamic(false);
  s.mutable_thresholds()->set_watchdog_thresh_seconds(10);
  ModelOptions options;
  options.sites = 1000000;
  const double patch = 1.069 / 48712 * 1000000;
  s.mutable_kernel()->set_arch("x86_64");
  v1::AttachPrediction p =
      PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, options);
  EXPECT_FALSE(p.uses_fgraph());
  EXPECT_NEAR(p.patch_seconds(), patch, 1e-9);
  EXPECT_NEAR(p.non_yielding_seconds(), patch, 1e-9);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  s.mutable_kernel()->set_arch("aarch64");
  p = PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, options);
  EXPECT_EQ(p.non_yielding_seconds(), 0);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
  // 900,000 sites on x86: 19.75 s, under the 20 s threshold: a warning.
  s.mutable_kernel()->set_arch("x86_64");
  options.sites = 900000;
  p = PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, options);
  EXPECT_EQ(p.risk(), v1::RISK_WARNING);
  // fentry/fexit: one trampoline update per probe, each waiting on RCU:
  // no stretch of CPU, whatever the count.
  options.sites = 10000;
  p = PredictFgraphAttach(s, v1::PROBE_KIND_FENTRY_FEXIT, options);
  EXPECT_GT(p.patch_seconds(), 20.0);
  EXPECT_EQ(p.non_yielding_seconds(), 0);
  EXPECT_EQ(p.risk(), v1::RISK_LATENCY);
}

// Before 6.14 an fprobe with an exit handler preallocates sites x possible
// CPUs x 2 rethook nodes of 64 B (fprobe_init_rethook()): 5,000 functions
// on 256 possible CPUs = 163,840,000 B. Entry-only kinds, 6.14+ (fprobe on
// fgraph) and other kinds: none.
TEST(FgraphAttachTest, RethookNodesOfAReturnFprobeBefore614) {
  v1::HostSnapshot s =
      testing::FgraphAttachHost("6.13.0", v1::PREEMPT_MODE_FULL, 1000);
  s.mutable_cpus()->set_online(64);
  s.mutable_cpus()->set_possible(256);
  ModelOptions options;
  options.sites = 5000;
  for (v1::ProbeKind kind :
       {v1::PROBE_KIND_KPROBE_MULTI_RETURN, v1::PROBE_KIND_KPROBE_SESSION,
        v1::PROBE_KIND_FPROBE_RETURN_EVENT}) {
    EXPECT_EQ(PredictFgraphAttach(s, kind, options).rethook_bytes(), 163840000u)
        << kind;
  }
  EXPECT_EQ(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI, options)
                .rethook_bytes(),
            0u);
  EXPECT_EQ(
      PredictFgraphAttach(s, v1::PROBE_KIND_KRETPROBE, options).rethook_bytes(),
      0u);
  // Possible CPUs unknown: the online ones, 64.
  s.mutable_cpus()->clear_possible();
  EXPECT_EQ(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, options)
                .rethook_bytes(),
            5000u * 64 * 2 * 64);
  // 6.14: on fgraph, no rethook.
  s.mutable_kernel()->set_release("6.14.0");
  EXPECT_EQ(PredictFgraphAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, options)
                .rethook_bytes(),
            0u);
}

}  // namespace
}  // namespace tracehealth
