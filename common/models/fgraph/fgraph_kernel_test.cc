#include "common/models/fgraph/fgraph_kernel.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

v1::KernelInfo Kernel(const char* release, v1::PreemptMode mode,
                      std::optional<bool> dynamic = std::nullopt,
                      std::optional<bool> preempt_rcu = std::nullopt,
                      const char* arch = "x86_64") {
  v1::KernelInfo k;
  k.set_release(release);
  k.set_preempt_mode(mode);
  if (dynamic) k.set_preempt_dynamic(*dynamic);
  if (preempt_rcu) k.set_config_preempt_rcu(*preempt_rcu);
  if (*arch) k.set_arch(arch);
  return k;
}

struct Resolved {
  Preemption p;
  Stretches s;
};

// A walk of 100 s whose every pass takes 10 ms.
Resolved Resolve(const v1::KernelInfo& k) {
  const KernelFeatures f = ResolveKernelFeatures(k, FeatureTable::Builtin());
  Resolved r;
  r.p = ResolvePreemption(k, f);
  const bool under_rcu = !f.release || f.fgraph_walk_rcu.present;
  r.s = WalkStretches(r.p, under_rcu, 100.0, 0.01);
  return r;
}

// include/linux/kernel.h: might_resched() is __cond_resched() on
// CONFIG_PREEMPT_VOLUNTARY_BUILD and on PREEMPT_DYNAMIC booted voluntary,
// a no-op on none; slab_pre_alloc_hook() -> might_alloc() ->
// might_sleep_if(GFP_KERNEL) reaches it at each of a pass's 32
// allocations. __cond_resched() calls rcu_all_qs() without PREEMPT_RCU.
TEST(FgraphKernelTest, NoneVoluntaryAndDynamicBootedNone) {
  // Static PREEMPT_NONE (CONFIG_PREEMPTION=n, so no PREEMPT_RCU): the
  // whole walk yields nowhere and reports no quiescent state.
  Resolved r = Resolve(Kernel("6.16.0", v1::PREEMPT_MODE_NONE, false));
  EXPECT_FALSE(r.p.preemption_build);
  EXPECT_EQ(r.p.build_source, v1::INPUT_SOURCE_MEASURED);
  EXPECT_FALSE(r.p.preempt_rcu);
  EXPECT_EQ(r.p.preempt_rcu_source, v1::INPUT_SOURCE_DERIVED);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 100.0);
  EXPECT_TRUE(r.s.non_yielding_is_walk);
  EXPECT_DOUBLE_EQ(r.s.no_qs, 100.0);
  EXPECT_TRUE(r.s.no_qs_is_walk);
  // Static PREEMPT_VOLUNTARY: one pass each.
  r = Resolve(Kernel("6.1.0", v1::PREEMPT_MODE_VOLUNTARY, false));
  EXPECT_FALSE(r.p.preemption_build);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0.01);
  EXPECT_FALSE(r.s.non_yielding_is_walk);
  EXPECT_DOUBLE_EQ(r.s.no_qs, 0.01);
  // PREEMPT_DYNAMIC booted none, CONFIG_PREEMPT_RCU=y: a soft lockup's
  // worth of walk, but each pass's rcu_read_unlock() reports the QS.
  r = Resolve(Kernel("6.1.0", v1::PREEMPT_MODE_NONE, true, true));
  EXPECT_TRUE(r.p.preemption_build);
  EXPECT_TRUE(r.p.preempt_rcu);
  EXPECT_EQ(r.p.preempt_rcu_source, v1::INPUT_SOURCE_MEASURED);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 100.0);
  EXPECT_DOUBLE_EQ(r.s.no_qs, 0.01);
  EXPECT_FALSE(r.s.no_qs_is_walk);
  // The same without the config: every PREEMPT_DYNAMIC build has it.
  r = Resolve(Kernel("6.1.0", v1::PREEMPT_MODE_NONE, true));
  EXPECT_TRUE(r.p.preempt_rcu);
  EXPECT_EQ(r.p.preempt_rcu_source, v1::INPUT_SOURCE_DERIVED);
  // PREEMPT_DYNAMIC booted voluntary: one pass.
  r = Resolve(Kernel("6.1.0", v1::PREEMPT_MODE_VOLUNTARY, true));
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0.01);
  EXPECT_DOUBLE_EQ(r.s.no_qs, 0.01);
  // Whether the build is dynamic unknown: assumed a PREEMPTION build (the
  // larger c_visit) and PREEMPT_RCU off (the worst case).
  r = Resolve(Kernel("6.1.0", v1::PREEMPT_MODE_NONE));
  EXPECT_TRUE(r.p.preemption_build);
  EXPECT_EQ(r.p.build_source, v1::INPUT_SOURCE_DEFAULT);
  EXPECT_FALSE(r.p.preempt_rcu);
  EXPECT_EQ(r.p.preempt_rcu_source, v1::INPUT_SOURCE_DEFAULT);
  EXPECT_DOUBLE_EQ(r.s.no_qs, 100.0);
}

TEST(FgraphKernelTest, PreemptibleKernels) {
  // PREEMPT_RT: rwlocks sleep, RCU is preemptible: nothing non-yielding.
  Resolved r = Resolve(Kernel("6.12.0", v1::PREEMPT_MODE_RT));
  EXPECT_TRUE(r.p.preempt_rcu);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0);
  EXPECT_DOUBLE_EQ(r.s.no_qs, 0.01);
  // PREEMPT (full): PREEMPT_RCU, nothing non-yielding.
  r = Resolve(Kernel("6.19.2", v1::PREEMPT_MODE_FULL, false));
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0);
  // A static PREEMPT_LAZY build: PREEMPT_RCU until 6.14, not from 6.15
  // ("rcu: limit PREEMPT_RCU configurations"), where rcu_read_lock()
  // disables preemption and each pass becomes one stretch.
  r = Resolve(Kernel("6.14.3", v1::PREEMPT_MODE_LAZY, false));
  EXPECT_TRUE(r.p.preempt_rcu);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0);
  r = Resolve(Kernel("6.15.0", v1::PREEMPT_MODE_LAZY, false));
  EXPECT_FALSE(r.p.preempt_rcu);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0.01);
  // PREEMPT_DYNAMIC booted lazy keeps PREEMPT_RCU on 6.15+.
  r = Resolve(Kernel("6.18.2", v1::PREEMPT_MODE_LAZY, true));
  EXPECT_TRUE(r.p.preempt_rcu);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0);
  // Unknown mode: taken as PREEMPT_NONE.
  r = Resolve(Kernel("6.18.2", v1::PREEMPT_MODE_UNKNOWN));
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 100.0);
}

// Before "fgraph: Convert ret_stack tasklist scanning to rcu" (5.10) each
// pass held read_lock(&tasklist_lock) (not read_lock_irqsave): preemption
// off on every model, interrupts on.
TEST(FgraphKernelTest, TasklistLockBefore510) {
  Resolved r = Resolve(Kernel("5.9.16", v1::PREEMPT_MODE_FULL, false));
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0.01);
  r = Resolve(Kernel("5.10.0", v1::PREEMPT_MODE_FULL, false));
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0);
  // A second fgraph user (6.11+ init_task_vars): one pass, preemption off.
  const Preemption full = Resolve(Kernel("6.11.0", v1::PREEMPT_MODE_FULL)).p;
  EXPECT_DOUBLE_EQ(SecondUserStretches(full, 0.01).non_yielding, 0.01);
  const Preemption rt = Resolve(Kernel("6.12.0", v1::PREEMPT_MODE_RT)).p;
  EXPECT_DOUBLE_EQ(SecondUserStretches(rt, 0.01).non_yielding, 0);
}

// 7dadeaa6e851 (7.0): x86-64, arm64, ... refuse preempt=none|voluntary and
// build neither; other architectures keep them.
TEST(FgraphKernelTest, NoneAndVoluntaryRefusedFrom70OnLazyArchitectures) {
  Resolved r = Resolve(Kernel("7.0.0", v1::PREEMPT_MODE_NONE, true));
  EXPECT_TRUE(r.p.refused_mode);
  EXPECT_EQ(r.p.mode, v1::PREEMPT_MODE_LAZY);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 0);
  r = Resolve(
      Kernel("7.0.0", v1::PREEMPT_MODE_VOLUNTARY, true, true, "aarch64"));
  EXPECT_TRUE(r.p.refused_mode);
  r = Resolve(Kernel("6.19.8", v1::PREEMPT_MODE_NONE, true));
  EXPECT_FALSE(r.p.refused_mode);
  EXPECT_EQ(r.p.mode, v1::PREEMPT_MODE_NONE);
  r = Resolve(Kernel("7.1.0", v1::PREEMPT_MODE_NONE, false, false, "alpha"));
  EXPECT_FALSE(r.p.refused_mode);
  EXPECT_DOUBLE_EQ(r.s.non_yielding, 100.0);
}

KernelFeatures Features(const char* release, const char* arch = "x86_64") {
  v1::KernelInfo k;
  k.set_release(release);
  k.set_arch(arch);
  return ResolveKernelFeatures(k, FeatureTable::Builtin());
}

// fgraph.c: <= 6.10 kmalloc_array(50, sizeof(struct ftrace_ret_stack)) of
// 40 B entries on x86-64 (kmalloc-2048), 48 B on aarch64 (its fp field:
// 2,400 B, kmalloc-4096); 6.11-6.12 kmalloc(PAGE_SIZE); 6.13+ kmem_cache
// "fgraph_stack" of 4096 B.
// IBT is enforced only with the config, the CPU's flag and no ibt=off;
// each missing input leaves it unknown, each "no" makes it known off.
TEST(FgraphKernelTest, IbtFromConfigFlagAndCommandLine) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_arch("x86_64");
  s.mutable_kernel()->set_cmdline("ro quiet");
  s.mutable_kernel()->set_config_x86_kernel_ibt(true);
  s.mutable_cpus()->set_ibt(true);
  auto is = [&](bool on, bool known) {
    const KernelIbt ibt = KernelIbtOf(s);
    return ibt.on == on && ibt.known == known;
  };
  EXPECT_TRUE(is(true, true));
  // ibt=off anywhere on the command line, even before another ibt=.
  s.mutable_kernel()->set_cmdline("ro ibt=off ibt=warn quiet");
  EXPECT_TRUE(is(false, true));
  // Words that only start or end alike are other parameters.
  s.mutable_kernel()->set_cmdline("ro xibt=off ibt=offx ibt=warn");
  EXPECT_TRUE(is(true, true));
  // The CPU without the flag (or the kernel turned it off).
  s.mutable_cpus()->set_ibt(false);
  EXPECT_TRUE(is(false, true));
  // The flags not read: unknown, taken as off.
  s.mutable_cpus()->clear_ibt();
  EXPECT_TRUE(is(false, false));
  // A build without IBT decides it whatever the CPU.
  s.mutable_kernel()->set_config_x86_kernel_ibt(false);
  EXPECT_TRUE(is(false, true));
  s.mutable_kernel()->clear_config_x86_kernel_ibt();
  s.mutable_cpus()->set_ibt(true);
  EXPECT_TRUE(is(false, false));
  // arm64 has no IBT; a missing config does not matter there.
  s.mutable_kernel()->set_arch("aarch64");
  EXPECT_TRUE(is(false, true));
}

TEST(FgraphKernelTest, ShadowStackSizeByRelease) {
  EXPECT_EQ(ShadowStackBytesPerThread(Features("6.1.0"), 4096), 2048u);
  EXPECT_EQ(ShadowStackBytesPerThread(Features("6.10.14"), 65536), 2048u);
  EXPECT_EQ(ShadowStackBytesPerThread(Features("6.1.0", "aarch64"), 4096),
            4096u);
  EXPECT_EQ(ShadowStackBytesPerThread(Features("6.10.14", "aarch64"), 16384),
            4096u);
  EXPECT_EQ(ShadowStackBytesPerThread(Features("6.11.0"), 4096), 4096u);
  EXPECT_EQ(ShadowStackBytesPerThread(Features("6.12.5", "aarch64"), 65536),
            65536u);
  EXPECT_EQ(ShadowStackBytesPerThread(Features("6.13.0", "aarch64"), 65536),
            4096u);
  v1::KernelInfo none;
  EXPECT_EQ(ShadowStackBytesPerThread(
                ResolveKernelFeatures(none, FeatureTable::Builtin()), 65536),
            4096u);
}

TEST(FgraphKernelTest, ProbeKindsByRelease) {
  v1::KernelInfo k;
  // BPF kprobe_multi from 5.18 (0dcac2725406).
  KindSupport s = SupportOf(v1::PROBE_KIND_KPROBE_MULTI, k, Features("5.4.0"));
  EXPECT_EQ(s.availability, KindAvailability::kBeforeRelease);
  EXPECT_EQ(SupportOf(v1::PROBE_KIND_KPROBE_MULTI_RETURN, k, Features("5.17"))
                .availability,
            KindAvailability::kBeforeRelease);
  EXPECT_EQ(
      SupportOf(v1::PROBE_KIND_KPROBE_MULTI, k, Features("5.18")).availability,
      KindAvailability::kAvailable);
  // kprobe session 6.10, fprobe events 6.5.
  EXPECT_EQ(SupportOf(v1::PROBE_KIND_KPROBE_SESSION, k, Features("6.9.12"))
                .availability,
            KindAvailability::kBeforeRelease);
  EXPECT_EQ(SupportOf(v1::PROBE_KIND_KPROBE_SESSION, k, Features("6.10"))
                .availability,
            KindAvailability::kAvailable);
  EXPECT_EQ(SupportOf(v1::PROBE_KIND_FPROBE_RETURN_EVENT, k, Features("6.4"))
                .availability,
            KindAvailability::kBeforeRelease);
  EXPECT_EQ(
      SupportOf(v1::PROBE_KIND_FPROBE_EVENT, k, Features("6.5")).availability,
      KindAvailability::kAvailable);
  // Config off beats the release; kretprobes exist everywhere.
  k.set_config_fprobe(false);
  EXPECT_EQ(SupportOf(v1::PROBE_KIND_KPROBE_MULTI, k, Features("6.18.2"))
                .availability,
            KindAvailability::kConfigOff);
  EXPECT_EQ(
      SupportOf(v1::PROBE_KIND_KRETPROBE, k, Features("4.19")).availability,
      KindAvailability::kAvailable);
}

// The entry-only backport needs DYNAMIC_FTRACE_WITH_REGS on 6.18.y
// (6.18.32); arm64, WITH_ARGS only, needs cd06078a38aa (6.18.34).
TEST(FgraphKernelTest, EntryOnlyFprobesByArchitecture) {
  EXPECT_FALSE(DecideFgraphUse(v1::PROBE_KIND_KPROBE_MULTI,
                               Features("6.18.32", "x86_64"))
                   .uses_fgraph);
  EXPECT_TRUE(DecideFgraphUse(v1::PROBE_KIND_KPROBE_MULTI,
                              Features("6.18.31", "x86_64"))
                  .uses_fgraph);
  EXPECT_TRUE(DecideFgraphUse(v1::PROBE_KIND_KPROBE_MULTI,
                              Features("6.18.33", "aarch64"))
                  .uses_fgraph);
  EXPECT_FALSE(DecideFgraphUse(v1::PROBE_KIND_KPROBE_MULTI,
                               Features("6.18.34", "aarch64"))
                   .uses_fgraph);
  // Return probes stay on fgraph everywhere.
  EXPECT_TRUE(DecideFgraphUse(v1::PROBE_KIND_KPROBE_MULTI_RETURN,
                              Features("6.18.34", "aarch64"))
                  .uses_fgraph);
}

// arch/x86/kernel/ftrace.c: ftrace_replace_code() queues every record to
// text_poke_queue() with no cond_resched(); arm64, riscv and loongarch set
// FTRACE_MAY_SLEEP in arch_ftrace_update_code(), so the generic loop
// reschedules after each record.
TEST(FgraphKernelTest, WhoseFtracePatchingReschedules) {
  EXPECT_TRUE(PatchingReschedules("aarch64"));
  EXPECT_TRUE(PatchingReschedules("riscv64"));
  EXPECT_TRUE(PatchingReschedules("loongarch64"));
  EXPECT_FALSE(PatchingReschedules("x86_64"));
  EXPECT_FALSE(PatchingReschedules(""));  // unknown: the worst case
  for (v1::ProbeKind k :
       {v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, v1::PROBE_KIND_FUNCTION_PROFILER,
        v1::PROBE_KIND_GRAPH_LATENCY_TRACER, v1::PROBE_KIND_KPROBE_MULTI,
        v1::PROBE_KIND_KPROBE_MULTI_RETURN, v1::PROBE_KIND_KPROBE_SESSION,
        v1::PROBE_KIND_FPROBE_EVENT, v1::PROBE_KIND_FPROBE_RETURN_EVENT}) {
    EXPECT_TRUE(PatchesInOneUpdate(k)) << k;
  }
  EXPECT_FALSE(PatchesInOneUpdate(v1::PROBE_KIND_KRETPROBE));
  EXPECT_FALSE(PatchesInOneUpdate(v1::PROBE_KIND_FENTRY_FEXIT));
}

// The walk of Resolve() (100 s, 10 ms a pass) followed by 3 s of patching
// without a reschedule point.
TEST(FgraphKernelTest, PatchingWithoutAReschedulePoint) {
  // Static NONE, no PREEMPT_RCU: one stretch, walk and patching, in both.
  Resolved r = Resolve(Kernel("6.16.0", v1::PREEMPT_MODE_NONE, false));
  Stretches s = WithPatching(r.p, false, r.s, 3.0);
  EXPECT_DOUBLE_EQ(s.non_yielding, 103.0);
  EXPECT_DOUBLE_EQ(s.no_qs, 103.0);
  // The same where the patching reschedules (arm64): the walk's alone.
  s = WithPatching(r.p, true, r.s, 3.0);
  EXPECT_DOUBLE_EQ(s.non_yielding, 100.0);
  EXPECT_DOUBLE_EQ(s.no_qs, 100.0);
  // No walk (a kind off fgraph): the patching alone.
  s = WithPatching(r.p, false, Stretches{}, 3.0);
  EXPECT_DOUBLE_EQ(s.non_yielding, 3.0);
  EXPECT_DOUBLE_EQ(s.no_qs, 3.0);
  // PREEMPT_DYNAMIC booted none (PREEMPT_RCU): the lockup stretch joins,
  // the tick reports a quiescent state during patching (one pass stays).
  r = Resolve(Kernel("6.16.0", v1::PREEMPT_MODE_NONE, true));
  s = WithPatching(r.p, false, r.s, 3.0);
  EXPECT_DOUBLE_EQ(s.non_yielding, 103.0);
  EXPECT_DOUBLE_EQ(s.no_qs, 0.01);
  // Static VOLUNTARY: the walk reschedules every pass; the patching is a
  // stretch of its own, the longer of the two (and, without PREEMPT_RCU,
  // without a quiescent state).
  r = Resolve(Kernel("6.1.0", v1::PREEMPT_MODE_VOLUNTARY, false));
  s = WithPatching(r.p, false, r.s, 3.0);
  EXPECT_DOUBLE_EQ(s.non_yielding, 3.0);
  EXPECT_DOUBLE_EQ(s.no_qs, 3.0);
  s = WithPatching(r.p, false, r.s, 0.001);
  EXPECT_DOUBLE_EQ(s.non_yielding, 0.01);
  // FULL and RT preempt the patching: the walk's stretches as they were.
  for (v1::PreemptMode m : {v1::PREEMPT_MODE_FULL, v1::PREEMPT_MODE_RT}) {
    r = Resolve(Kernel("6.16.0", m, true));
    s = WithPatching(r.p, false, r.s, 3.0);
    EXPECT_DOUBLE_EQ(s.non_yielding, r.s.non_yielding) << m;
    EXPECT_DOUBLE_EQ(s.no_qs, r.s.no_qs) << m;
  }
}

}  // namespace
}  // namespace tracehealth
