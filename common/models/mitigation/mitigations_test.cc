#include "common/models/mitigation/mitigations.h"

#include <string>
#include <vector>

#include "common/models/mitigation/attach_verdict.h"
#include "common/models/testing/model_hosts.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

// 6.16 PREEMPT_NONE (PREEMPT_DYNAMIC: a CONFIG_PREEMPTION build, c_visit
// 88.7 ns), 240,000 threads none of which has a shadow stack, 1,200,000
// forks in 100,000 s of uptime (12 forks/s).
v1::HostSnapshot Host240k() {
  v1::HostSnapshot s =
      testing::FgraphHost("6.16.0", v1::PREEMPT_MODE_NONE, 240000);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_threads()->set_forks_since_boot(1200000);
  s.mutable_threads()->set_uptime_seconds(100000);
  return s;
}

// 2,000 call sites: 2 ms of patching for a graph tracer (c_site 1 us);
// other kinds pay their own c_site (fentry 17 s / 2,800 = 6.071 ms,
// kretprobe 1 s / 184 = 5.435 ms, fprobe kinds 1.069 s / 48,712 = 21.95 us).
ModelOptions Sites2000() {
  ModelOptions o;
  o.sites = 2000;
  return o;
}

std::vector<v1::Mitigation> For(const v1::HostSnapshot& s, v1::ProbeKind kind,
                                double budget,
                                std::optional<v1::ThreadTrend> trend = {},
                                ModelOptions o = Sites2000()) {
  return Mitigate(s, kind, budget, o, AssessAttach(s, kind, budget, o), trend);
}

// A copy: callers pass the temporary Mitigate() returns.
std::optional<v1::Mitigation> Find(
    const std::vector<v1::Mitigation>& ms, v1::Mitigation::Kind kind,
    v1::ProbeKind probe = v1::PROBE_KIND_UNSPECIFIED) {
  for (const v1::Mitigation& m : ms) {
    if (m.kind() == kind && m.probe_kind() == probe) return m;
  }
  return std::nullopt;
}

v1::ThreadTrend Trend(double per_second) {
  v1::ThreadTrend t;
  t.set_threads_per_second(per_second);
  t.set_window_seconds(600);
  t.set_samples(40);
  t.set_threads(240000);
  return t;
}

TEST(MitigateTest, NothingForASafeAttach) {
  v1::HostSnapshot s = Host240k();
  EXPECT_TRUE(For(s, v1::PROBE_KIND_FENTRY_FEXIT, 2.0).empty());
}

TEST(MitigateTest, EveryKindOnTheLockupHost) {
  const std::vector<v1::Mitigation> ms =
      For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0);
  // The ones that fit the 2 s budget first (warm: 491.0 ms, a standing
  // user: 23.3 ms), then the rest in their order: fentry (2000 * 6.071 ms
  // = 12.14 s) and kretprobe (2000 * 5.435 ms = 10.87 s) do not fit.
  std::vector<std::pair<v1::Mitigation::Kind, v1::ProbeKind>> order;
  for (const auto& m : ms) order.emplace_back(m.kind(), m.probe_kind());
  using M = v1::Mitigation;
  EXPECT_EQ(order, (std::vector<std::pair<v1::Mitigation::Kind, v1::ProbeKind>>{
                       {M::KIND_WARM_SHADOW_STACKS, v1::PROBE_KIND_UNSPECIFIED},
                       {M::KIND_KEEP_GRAPH_USER, v1::PROBE_KIND_UNSPECIFIED},
                       {M::KIND_TIMING, v1::PROBE_KIND_UNSPECIFIED},
                       {M::KIND_OTHER_PROBE_KIND, v1::PROBE_KIND_FENTRY_FEXIT},
                       {M::KIND_OTHER_PROBE_KIND, v1::PROBE_KIND_KRETPROBE},
                       {M::KIND_LARGER_BATCH, v1::PROBE_KIND_UNSPECIFIED},
                       {M::KIND_PREEMPTIBLE, v1::PROBE_KIND_UNSPECIFIED},
                   }));
  // On 6.16 entry-only fprobes still register fgraph: no kprobe_multi or
  // fprobe event among the alternatives.
  EXPECT_FALSE(Find(ms, M::KIND_OTHER_PROBE_KIND, v1::PROBE_KIND_KPROBE_MULTI)
                   .has_value());
}

TEST(MitigateTest, TimingWithoutATrendIsUnknown) {
  std::optional<v1::Mitigation> m =
      Find(For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0),
           v1::Mitigation::KIND_TIMING);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->text(),
            "attach now or later: thread trend unknown (no history of this "
            "host's thread count)");
  EXPECT_FALSE(m->has_latency_seconds());
  EXPECT_FALSE(m->has_wait_seconds());
  EXPECT_FALSE(m->fits_budget());
}

TEST(MitigateTest, WarmTheStacksCostsTheSameWalkOnce) {
  std::optional<v1::Mitigation> m =
      Find(For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0),
           v1::Mitigation::KIND_WARM_SHADOW_STACKS);
  ASSERT_TRUE(m.has_value());
  // The warm-up: the 79.8611 s walk (7,500 passes over 240,000 threads),
  // itself a soft lockup on PREEMPT_NONE.
  EXPECT_NEAR(m->cost_seconds(), 79.8611, 1e-4);
  EXPECT_EQ(m->cost_risk(), v1::RISK_STALL);
  // Attached 60 s later: 12 forks/s * 60 s = 720 threads without a stack,
  // forked last, so at the tail of the task list: 23 passes, 22 stopping
  // early, each walking past the 239,280 served threads first:
  // V = 22 * (240000 - 720 + 1) + 32 * 22 * 23 / 2 + 240000 = 5,512,278;
  // 88.7 ns * V + 2 us * 23 + 20 ns * 720 = 488.999 ms, + 2 ms patching =
  // 490.999 ms.
  EXPECT_NEAR(m->latency_seconds(), 0.490999, 1e-6);
  EXPECT_EQ(m->risk(), v1::RISK_LATENCY);
  EXPECT_TRUE(m->fits_budget());
  EXPECT_EQ(m->text(),
            "warm the shadow stacks in a quiet moment (function_graph on one "
            "function in a tracefs instance, then nop): the same 79.86 s walk "
            "once (itself a stall risk on this kernel); attached within 1m "
            "after it, 720 threads forked since (12.0/s) lack a stack: about "
            "491.0 ms");
}

TEST(MitigateTest, KeepAGraphUserHoldsAStackPerThread) {
  std::optional<v1::Mitigation> m =
      Find(For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0),
           v1::Mitigation::KIND_KEEP_GRAPH_USER);
  ASSERT_TRUE(m.has_value());
  // 6.16: 4 KiB per thread; 240,000 * 4096 = 983,040,000 B = 937.5 MiB.
  EXPECT_EQ(m->bytes_per_thread(), 4096u);
  EXPECT_EQ(m->memory_bytes(), 983040000u);
  // fgraph then active (6.16: a second user): init_task_vars() visits every
  // thread once, 88.7 ns * 240000 + 2 us = 21.290 ms, + 2 ms of patching.
  EXPECT_NEAR(m->latency_seconds(), 0.023290, 1e-9);
  EXPECT_TRUE(m->fits_budget());
  EXPECT_NEAR(m->cost_seconds(), 79.8611, 1e-4);
  EXPECT_NE(m->text().find("; holds 937.5 MiB (240000 threads x 4096 B, 4 KiB "
                           "fgraph_stack object (shadow_stack_4k"),
            std::string::npos)
      << m->text();
  EXPECT_NE(m->text().find("this attach takes about 23.3 ms (one pass over "
                           "the threads, init_task_vars)"),
            std::string::npos)
      << m->text();
}

TEST(MitigateTest, NoStandingGraphUserForAGraphTracerBefore611) {
  v1::HostSnapshot s = Host240k();
  s.mutable_kernel()->set_release("6.10.3");
  std::vector<v1::Mitigation> ms =
      For(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0);
  EXPECT_FALSE(Find(ms, v1::Mitigation::KIND_KEEP_GRAPH_USER).has_value());
  // 6.11: one page each (4096 B without a page size in the snapshot).
  s.mutable_kernel()->set_release("6.11.0");
  ms = For(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0);
  ASSERT_TRUE(Find(ms, v1::Mitigation::KIND_KEEP_GRAPH_USER).has_value());
}

TEST(MitigateTest, OtherProbeKindsWithTheSameSites) {
  const std::vector<v1::Mitigation> ms =
      For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0);
  std::optional<v1::Mitigation> f = Find(
      ms, v1::Mitigation::KIND_OTHER_PROBE_KIND, v1::PROBE_KIND_FENTRY_FEXIT);
  ASSERT_TRUE(f.has_value());
  // No walk, but a trampoline update per probe: 2000 * 17 s / 2800 =
  // 12.14 s to attach (6.1 ms each), 2000 * 300 s / 2800 = 214.29 s to
  // detach (bpftrace PR #3053): over the 2 s budget, and said so.
  EXPECT_EQ(f->text(),
            "use fentry instead (BPF trampolines, never a shadow-stack walk): "
            "about 12.14 s for 2000 site(s) at 6.1 ms each, detaching about "
            "214.29 s");
  EXPECT_NEAR(f->latency_seconds(), 12.142857, 1e-6);
  EXPECT_EQ(f->risk(), v1::RISK_LATENCY);  // blocks >= 0.1 s
  EXPECT_FALSE(f->fits_budget());
  // 300 probes: 1.82 s, within the 2 s budget.
  ModelOptions o;
  o.sites = 300;
  f = Find(For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, {}, o),
           v1::Mitigation::KIND_OTHER_PROBE_KIND, v1::PROBE_KIND_FENTRY_FEXIT);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->latency_seconds(), 1.821429, 1e-6);
  EXPECT_TRUE(f->fits_budget());
}

TEST(MitigateTest, ANewUserOnAnActiveFgraphCanUseAnotherKind) {
  // fgraph active on 6.16: a new graph user walks no shadow stacks, but
  // init_task_vars() visits every thread once: 88.7 ns * 240000 + 2 us =
  // 21.290 ms, + 1 us for one site = 21.291 ms, over a 10 ms budget.
  // fentry on the one site: 17 s / 2800 = 6.07 ms, within it.
  v1::HostSnapshot s = Host240k();
  s.mutable_fgraph()->set_active(true);
  s.mutable_fgraph()->set_null_threads_bound(0);
  ModelOptions o;
  o.sites = 1;
  const std::vector<v1::Mitigation> ms =
      For(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 0.010, {}, o);
  std::optional<v1::Mitigation> f = Find(
      ms, v1::Mitigation::KIND_OTHER_PROBE_KIND, v1::PROBE_KIND_FENTRY_FEXIT);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->latency_seconds(), 0.0060714, 1e-7);
  EXPECT_TRUE(f->fits_budget());
  // Nothing to warm or batch: no shadow-stack walk.
  EXPECT_FALSE(Find(ms, v1::Mitigation::KIND_WARM_SHADOW_STACKS).has_value());
  EXPECT_FALSE(Find(ms, v1::Mitigation::KIND_LARGER_BATCH).has_value());
}

TEST(MitigateTest, EntryOnlyKindsWhereTheKernelHasTheOptimisation) {
  // 6.19: entry-only fprobes leave fgraph. A kprobe_multi return probe
  // (default 100 sites) can become an entry probe: 100 * 1.069 s / 48712 =
  // 2.19 ms (21.9 us each), detach 100 * 0.373 s / 48712 = 766 us.
  v1::HostSnapshot s = Host240k();
  s.mutable_kernel()->set_release("6.19.2");
  ModelOptions o;
  const std::vector<v1::Mitigation> ms =
      For(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, 2.0, {}, o);
  std::optional<v1::Mitigation> k = Find(
      ms, v1::Mitigation::KIND_OTHER_PROBE_KIND, v1::PROBE_KIND_KPROBE_MULTI);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->text(),
            "use kprobe_multi instead (no return probe: entry-only fprobes do "
            "not register fgraph on 6.19.2): about 2.2 ms for 100 site(s) at "
            "22 us each, detaching about 766 us");
  EXPECT_TRUE(Find(ms, v1::Mitigation::KIND_OTHER_PROBE_KIND,
                   v1::PROBE_KIND_FPROBE_EVENT)
                  .has_value());
}

TEST(MitigateTest, LargerBatch) {
  std::optional<v1::Mitigation> m =
      Find(For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0),
           v1::Mitigation::KIND_LARGER_BATCH);
  ASSERT_TRUE(m.has_value());
  // B = 1024: 235 passes; V = 1024 * 234 * 235 / 2 + 234 + 240000 =
  // 28,395,114; 88.7 ns * V + 2 us * 235 + 20 ns * 240000 = 2.52392 s,
  // + 2 ms = 2.52592 s: still over a 2 s budget, within a 3 s one.
  EXPECT_NEAR(m->latency_seconds(), 2.525917, 1e-6);
  EXPECT_EQ(m->batch(), 1024u);
  EXPECT_FALSE(m->fits_budget());
  EXPECT_EQ(m->text(),
            "a kernel with FTRACE_RETSTACK_ALLOC_SIZE 1024 (no release "
            "through 7.1; a patched build): 235 passes, about 2.53 s instead "
            "of 79.86 s");
  m = Find(For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 3.0),
           v1::Mitigation::KIND_LARGER_BATCH);
  EXPECT_TRUE(m->fits_budget());
}

TEST(MitigateTest, PreemptibleTurnsTheLockupIntoLatency) {
  std::optional<v1::Mitigation> m =
      Find(For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 100),
           v1::Mitigation::KIND_PREEMPTIBLE);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->risk(), v1::RISK_LATENCY);
  EXPECT_TRUE(m->fits_budget());  // 79.86 s <= 100 s
  EXPECT_EQ(m->text(),
            "switch to preempt=full (PREEMPT_DYNAMIC: at run time through "
            "/sys/kernel/debug/sched/preempt, or preempt=full at boot): the "
            "same 79.86 s, but preemptible: the caller waits (tracing and "
            "module loading wait on ftrace_lock as long), the CPU does not "
            "stall");
  // A static PREEMPT_NONE build walks at c_visit 58.7 ns:
  // 58.7 ns * 900,127,499 + 2 us * 7500 + 20 ns * 240000 = 52.857 s, + 2 ms
  // = 52.86 s; a preemptible build at 88.7 ns: 79.86 s. Not "the same".
  v1::HostSnapshot fixed = Host240k();
  fixed.mutable_kernel()->set_preempt_dynamic(false);
  m = Find(For(fixed, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 100),
           v1::Mitigation::KIND_PREEMPTIBLE);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->text(),
            "a preemptible kernel (CONFIG_PREEMPT or CONFIG_PREEMPT_LAZY): "
            "about 79.86 s instead of 52.86 s, but preemptible: the caller "
            "waits (tracing and module loading wait on ftrace_lock as long), "
            "the CPU does not stall");
  // Over budget only (already preemptible): not offered.
  v1::HostSnapshot full = Host240k();
  full.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_FULL);
  EXPECT_FALSE(Find(For(full, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0),
                    v1::Mitigation::KIND_PREEMPTIBLE)
                   .has_value());
}

TEST(MitigateTest, TimingShrinking) {
  // Falling 100 threads/s. The largest all-NULL thread count within 2 s:
  // at 37,920 threads, 1,185 full passes of 32,
  // V = 32 * 1184 * 1185 / 2 + 1184 + 37920 = 22,488,384;
  // 88.7 ns * V + 2 us * 1185 + 20 ns * 37920 + 2 ms = 1.99979 s; at 37,921
  // it is 2.00316 s. Wait (240000 - 37920) / 100 = 2020.8 s.
  std::optional<v1::Mitigation> m = Find(
      For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Trend(-100)),
      v1::Mitigation::KIND_TIMING);
  ASSERT_TRUE(m.has_value());
  EXPECT_NEAR(m->wait_seconds(), 2020.8, 1e-9);
  EXPECT_NEAR(m->latency_seconds(), 1.999791, 1e-6);
  EXPECT_TRUE(m->fits_budget());
  EXPECT_EQ(m->trend().threads_per_second(), -100);
  EXPECT_EQ(m->text(),
            "attach later: threads falling 100.0/s (over 10m, 40 samples); in "
            "33m41s (at 37920 threads) about 2.00 s");
  // Falling 0.1/s: 2,020,800 s, more than a day.
  m = Find(
      For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Trend(-0.1)),
      v1::Mitigation::KIND_TIMING);
  EXPECT_NE(m->text().find("; in more than 24h (at 37920 threads)"),
            std::string::npos)
      << m->text();
}

TEST(MitigateTest, TimingGrowingAndSteady) {
  // Rising 50/s: in 600 s 270,000 threads, 30,000 more without a stack;
  // 8,438 passes, V = 32 * 8437 * 8438 / 2 + 8437 + 270000 = 1,139,340,933;
  // 88.7 ns * V + 2 us * 8438 + 20 ns * 270000 + 2 ms = 101.08 s.
  std::optional<v1::Mitigation> m = Find(
      For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Trend(50)),
      v1::Mitigation::KIND_TIMING);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->wait_seconds(), 0);
  EXPECT_FALSE(m->fits_budget());
  EXPECT_EQ(m->text(),
            "attach now rather than later: threads rising 50.0/s (over 10m, "
            "40 samples); in 10m (270000 threads) about 101.08 s instead of "
            "79.86 s");
  // One thread every 1,000 s (below one a minute): steady.
  m = Find(
      For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Trend(1e-3)),
      v1::Mitigation::KIND_TIMING);
  EXPECT_EQ(m->text(),
            "attach now or later: threads steady (+0.00/s over 10m, 40 "
            "samples): later costs the same 79.86 s");
}

TEST(MitigateTest, TimingDoesNotHelpWhenPatchingAloneIsOverBudget) {
  // 2 ms of patching against a 1 ms budget: no thread count fits.
  std::optional<v1::Mitigation> m = Find(
      For(Host240k(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 1e-3, Trend(-100)),
      v1::Mitigation::KIND_TIMING);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->text(),
            "attach later does not help: threads falling 100.0/s, but the "
            "attach is unsafe at any thread count");
  EXPECT_FALSE(m->has_latency_seconds());
}

TEST(MitigateTest, UnknownThreadCountKeepsWhatDoesNotNeedIt) {
  v1::HostSnapshot s = Host240k();
  s.mutable_threads()->clear_total();
  const std::vector<v1::Mitigation> ms =
      For(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0, Trend(-100));
  EXPECT_FALSE(Find(ms, v1::Mitigation::KIND_TIMING).has_value());
  EXPECT_FALSE(Find(ms, v1::Mitigation::KIND_WARM_SHADOW_STACKS).has_value());
  EXPECT_FALSE(Find(ms, v1::Mitigation::KIND_LARGER_BATCH).has_value());
  std::optional<v1::Mitigation> k =
      Find(ms, v1::Mitigation::KIND_KEEP_GRAPH_USER);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->bytes_per_thread(), 4096u);
  EXPECT_FALSE(k->has_memory_bytes());
  EXPECT_TRUE(Find(ms, v1::Mitigation::KIND_OTHER_PROBE_KIND,
                   v1::PROBE_KIND_FENTRY_FEXIT)
                  .has_value());
}

TEST(MitigateTest, BeforeFprobeOnFgraphEveryFprobeKindIsAnOption) {
  // 6.1: fprobe is on rethook; the graph tracer is the only walker.
  // kprobe_multi_return on 2000 sites: 2000 * 1.069 s / 48712 = 43.9 ms,
  // detach 2000 * 0.373 s / 48712 = 15.3 ms.
  v1::HostSnapshot s = Host240k();
  s.mutable_kernel()->set_release("6.1.0");
  const std::vector<v1::Mitigation> ms =
      For(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2.0);
  std::optional<v1::Mitigation> k =
      Find(ms, v1::Mitigation::KIND_OTHER_PROBE_KIND,
           v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->text(),
            "use kprobe_multi_return instead (fprobe is built on rethook, not "
            "fgraph, on 6.1.0): about 43.9 ms for 2000 site(s) at 22 us each, "
            "detaching about 15.3 ms");
  for (v1::ProbeKind p :
       {v1::PROBE_KIND_KPROBE_MULTI, v1::PROBE_KIND_FPROBE_EVENT,
        v1::PROBE_KIND_FPROBE_RETURN_EVENT}) {
    EXPECT_TRUE(Find(ms, v1::Mitigation::KIND_OTHER_PROBE_KIND, p).has_value())
        << p;
  }
}

TEST(MitigateTest, NoWarmUpWhenForksWouldUndoIt) {
  // 412 threads, 45,678 forks in 3,600 s (12.7/s): 761 forks in a minute,
  // more than the 412 threads without a stack.
  v1::HostSnapshot s = testing::FgraphHost("6.1.0", v1::PREEMPT_MODE_NONE, 412);
  s.mutable_threads()->set_forks_since_boot(45678);
  s.mutable_threads()->set_uptime_seconds(3600);
  const std::vector<v1::Mitigation> ms =
      For(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 1e-4);
  EXPECT_FALSE(Find(ms, v1::Mitigation::KIND_WARM_SHADOW_STACKS).has_value());
  // B = 1024: a single pass.
  std::optional<v1::Mitigation> b = Find(ms, v1::Mitigation::KIND_LARGER_BATCH);
  ASSERT_TRUE(b.has_value());
  EXPECT_NE(b->text().find(": 1 pass, about "), std::string::npos) << b->text();
}

}  // namespace
}  // namespace tracehealth
