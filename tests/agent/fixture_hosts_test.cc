// The collector on every fixture host, and the predictions the models make
// from what it collected.
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/collect/collector.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/hardware_class.h"
#include "common/models/stackdepot/depot_pools.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"

namespace tracehealth::testing {
namespace {

using agent::Collector;
using agent::CollectorOptions;

const absl::Time kNow = absl::FromUnixSeconds(1796000000);

v1::HostSnapshot CollectFixture(const std::string& name,
                                const std::string& state_dir = "") {
  HostFs fs(FixtureRoot(name));
  CollectorOptions o;
  o.state_dir = state_dir;
  Collector c(&fs, o, [] { return kNow; });
  return c.Collect();
}

const v1::AttachPrediction& Attach(const v1::Predictions& p, v1::ProbeKind k) {
  for (const v1::AttachPrediction& a : p.attach()) {
    if (a.probe_kind() == k) return a;
  }
  ADD_FAILURE() << "no prediction for kind " << k;
  return p.attach(0);
}

TEST(FixtureHostsTest, PreemptNone616With240kThreads) {
  v1::HostSnapshot s = CollectFixture("preempt-none-6.16-240k");
  EXPECT_EQ(s.kernel().release(), "6.16.12-cloud-amd64");
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(s.kernel().preempt_source(), "debugfs sched/preempt");
  EXPECT_TRUE(s.kernel().preempt_dynamic());
  EXPECT_EQ(s.kernel().config_source(), "/proc/config.gz");
  EXPECT_TRUE(s.kernel().config_function_graph_tracer());
  EXPECT_EQ(s.threads().total(), 240000u);
  EXPECT_EQ(s.threads().running(), 41u);
  EXPECT_EQ(s.threads().forks_since_boot(), 1953211u);
  EXPECT_EQ(s.thresholds().watchdog_thresh_seconds(), 10u);
  EXPECT_EQ(s.thresholds().rcu_cpu_stall_timeout_seconds(), 21u);
  EXPECT_FALSE(s.thresholds().softlockup_panic());
  EXPECT_EQ(s.thresholds().hung_task_timeout_seconds(), 120u);
  ASSERT_TRUE(s.thresholds().has_hung_task_panic());
  EXPECT_FALSE(s.thresholds().hung_task_panic());
  EXPECT_EQ(s.cpus().online(), 64u);
  EXPECT_FALSE(s.cpus().invlpgb());
  EXPECT_EQ(s.fgraph().tracefs_path(), "/sys/kernel/tracing");
  ASSERT_TRUE(s.fgraph().has_active());
  EXPECT_FALSE(s.fgraph().active());
  EXPECT_EQ(s.fgraph().users_size(), 0);
  EXPECT_EQ(s.fgraph().null_threads_bound(), 240000u);
  EXPECT_EQ(s.fgraph().null_threads_basis(), "never seen active since boot");
  EXPECT_EQ(s.fgraph().available_filter_functions(), 2000u);
  EXPECT_EQ(s.fgraph().enabled_functions(), 0u);
  EXPECT_EQ(s.stackdepot().pools(), 3u);
  EXPECT_EQ(s.stackdepot().max_pools(), 8192u);
  // Everything is read; what this kernel's config leaves out (page_owner,
  // the KASAN vmalloc shadow) is not applicable, not unknown.
  EXPECT_EQ(s.unknown_size(), 0) << s.DebugString();
  ASSERT_EQ(s.not_applicable_size(), 2);
  EXPECT_EQ(s.not_applicable(0).input(), "trie");
  EXPECT_EQ(s.not_applicable(1).input(), "vmalloc.unpurged_areas");
  EXPECT_FALSE(s.has_trie());
  EXPECT_FALSE(s.vmalloc().has_unpurged_areas());

  v1::Predictions p = EvaluateAll(s);
  const v1::AttachPrediction& fg =
      Attach(p, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_TRUE(fg.uses_fgraph());
  EXPECT_EQ(fg.null_threads(), 240000u);
  EXPECT_EQ(fg.passes(), 7500u);  // ceil(240000 / 32)
  EXPECT_GT(fg.latency_seconds(), 20.0);
  EXPECT_EQ(fg.risk(), v1::RISK_STALL);
  bool soft_lockup = false;
  for (const v1::ThresholdCheck& c : fg.checks()) {
    if (c.kind() == v1::ThresholdCheck::KIND_SOFT_LOCKUP) {
      soft_lockup = c.applies() && c.margin() > 1;
    }
  }
  EXPECT_TRUE(soft_lockup);
  // ftrace_lock is held for the walk and the patching, under the 120 s
  // hung-task timeout: waiters are not reported.
  EXPECT_EQ(fg.hung_task(), v1::HUNG_TASK_RISK_NONE);
  int hung_checks = 0;
  for (const v1::ThresholdCheck& c : fg.checks()) {
    if (c.kind() != v1::ThresholdCheck::KIND_HUNG_TASK) continue;
    ++hung_checks;
    EXPECT_DOUBLE_EQ(c.threshold(), 120);
    EXPECT_DOUBLE_EQ(c.predicted(), fg.lock_seconds());
    EXPECT_LT(c.margin(), 1);
    EXPECT_FALSE(c.panics());
  }
  EXPECT_EQ(hung_checks, 1);
  // PREEMPT_DYNAMIC (CONFIG_PREEMPT_RCU=y) booted none: each pass reports
  // its quiescent state, so no RCU stall: one pass, 88.7 ns * 240,000 +
  // 2 us = 21.29 ms.
  EXPECT_TRUE(s.kernel().config_preempt_rcu());
  for (const v1::ThresholdCheck& c : fg.checks()) {
    if (c.kind() == v1::ThresholdCheck::KIND_RCU_STALL) {
      EXPECT_NEAR(c.predicted(), 0.021290, 1e-9);
      EXPECT_LT(c.margin(), 0.01);
    }
  }
  // kretprobes never use fgraph.
  EXPECT_FALSE(Attach(p, v1::PROBE_KIND_KRETPROBE).uses_fgraph());
}

TEST(FixtureHostsTest, KprobeMultiLinkOn614KeepsFgraphActive) {
  v1::HostSnapshot s = CollectFixture("kprobe-multi-6.14");
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_VOLUNTARY);
  EXPECT_EQ(s.kernel().config_source(), "/boot/config-6.14.0-1012-aws");
  ASSERT_EQ(s.fgraph().kprobe_multi_links_size(), 1);
  const v1::BpfKprobeMultiLink& l = s.fgraph().kprobe_multi_links(0);
  EXPECT_EQ(l.pid(), 4242u);
  EXPECT_EQ(l.fd(), 7u);
  EXPECT_EQ(l.comm(), "tetragon");
  EXPECT_EQ(l.link_type(), "kprobe_multi");
  EXPECT_EQ(l.kprobe_count(), 120u);
  EXPECT_FALSE(l.has_is_return());  // 6.14 does not tell
  EXPECT_TRUE(s.fgraph().has_links_scanned_at());
  ASSERT_EQ(s.fgraph().users_size(), 1);
  EXPECT_EQ(s.fgraph().users(0).kind(), v1::FgraphUser::KIND_BPF_KPROBE_MULTI);
  EXPECT_TRUE(s.fgraph().active());
  EXPECT_EQ(s.fgraph().null_threads_bound(), 0u);
  EXPECT_EQ(s.fgraph().enabled_functions(), 120u);

  v1::Predictions p = EvaluateAll(s);
  const v1::AttachPrediction& fg =
      Attach(p, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_TRUE(fg.fgraph_already_active());
  // A second fgraph user on 6.14 (multi-user since 6.11): init_task_vars()
  // walks the 12,000 threads once: 88.7e-9 * 12,000 + 2e-6 = 1.0664 ms.
  EXPECT_NEAR(fg.walk_seconds(), 0.0010664, 1e-9);
  EXPECT_EQ(fg.shadow_stack_bytes(), 0u);
  EXPECT_EQ(fg.risk(), v1::RISK_NONE);
  // Ubuntu's version_signature names the upstream release.
  EXPECT_EQ(s.kernel().upstream_version(), "6.14.8");
  EXPECT_EQ(s.fgraph().ftrace_filter_functions(), 0u);
}

TEST(FixtureHostsTest, FgraphActiveInInstanceOn619) {
  v1::HostSnapshot s = CollectFixture("fgraph-active-6.19");
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_LAZY);
  EXPECT_EQ(s.kernel().preempt_source(), "config");
  EXPECT_TRUE(s.cpus().invlpgb());
  ASSERT_EQ(s.fgraph().users_size(), 1);
  EXPECT_EQ(s.fgraph().users(0).kind(),
            v1::FgraphUser::KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_EQ(s.fgraph().users(0).where(), "foo");
  EXPECT_TRUE(s.fgraph().active());
  EXPECT_EQ(s.fgraph().null_threads_bound(), 0u);
  EXPECT_EQ(s.fgraph().null_threads_basis(), "fgraph active now");
  // Built without the hung-task detector: unknown, not the 120 s default.
  EXPECT_FALSE(s.thresholds().has_hung_task_timeout_seconds());
  EXPECT_FALSE(s.thresholds().has_hung_task_panic());
  std::set<std::string> unknown;
  for (const v1::UnknownInput& u : s.unknown()) unknown.insert(u.input());
  EXPECT_EQ(unknown.count("thresholds.hung_task_timeout_seconds"), 1u);
  EXPECT_EQ(unknown.count("thresholds.hung_task_panic"), 1u);

  v1::Predictions p = EvaluateAll(s);
  const v1::AttachPrediction& ret =
      Attach(p, v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  EXPECT_TRUE(ret.uses_fgraph());
  EXPECT_TRUE(ret.fgraph_already_active());
  EXPECT_EQ(ret.null_threads(), 0u);
  // One init_task_vars() pass over 50,000 threads: 4.437 ms.
  EXPECT_NEAR(ret.walk_seconds(), 0.004437, 1e-9);
  EXPECT_LT(ret.latency_seconds(), 0.01);
  EXPECT_EQ(ret.hung_task(), v1::HUNG_TASK_RISK_UNKNOWN);
  // Entry-only kprobe_multi is off fgraph on 6.19.
  EXPECT_FALSE(Attach(p, v1::PROBE_KIND_KPROBE_MULTI).uses_fgraph());
}

TEST(FixtureHostsTest, Kasan612With256Cpus) {
  v1::HostSnapshot s = CollectFixture("kasan-6.12-256cpu");
  EXPECT_TRUE(s.kernel().config_kasan());
  EXPECT_TRUE(s.kernel().config_kasan_generic());
  EXPECT_TRUE(s.kernel().config_kasan_vmalloc());
  EXPECT_TRUE(s.kernel().config_page_owner());
  EXPECT_EQ(s.kernel().config_stackdepot_max_frames(), 64u);
  EXPECT_EQ(s.kernel().page_size(), 4096u);
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(s.kernel().preempt_source(), "config");
  // Release 6.12.3: before the 6.12.4 backport of the flush combining.
  EXPECT_EQ(s.kernel().release(), "6.12.3");
  EXPECT_EQ(s.cpus().online(), 256u);
  EXPECT_EQ(s.cpus().possible(), 256u);
  EXPECT_EQ(s.vmalloc().unpurged_areas(), 3000u);
  EXPECT_EQ(s.vmalloc().unpurged_shadow_page_areas(), 2804u);
  EXPECT_EQ(s.vmalloc().areas(), 3900u);
  EXPECT_EQ(s.vmalloc().vmalloc_used_bytes(), 8123456ull * 1024);
  EXPECT_EQ(s.stackdepot().pools(), 7950u);
  EXPECT_EQ(s.stackdepot().persistent_count(), 486120u);
  EXPECT_EQ(s.stackdepot().max_pools(), 8192u);
  EXPECT_EQ(s.stackdepot().max_pools_source(), "hard cap before 6.17");
  ASSERT_EQ(s.depot_history_size(), 1);
  EXPECT_EQ(s.depot_history(0).pools(), 7950u);
  // The trie measured on this host's page_owner stacks.
  ASSERT_TRUE(s.has_trie()) << UnknownReason(s, "trie");
  // Expected from the file itself: distinct stacks, and the hash backend's
  // ALIGN(32 + 8 * frames, 16) bytes for each.
  auto text = ReadFile(FixtureRoot("kasan-6.12-256cpu") +
                       "/sys/kernel/debug/page_owner_stacks/show_stacks");
  ASSERT_TRUE(text.ok());
  std::set<std::string> distinct;
  uint64_t hash_bytes = 0;
  std::string block;
  int frames = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (absl::StartsWith(line, " ")) {
      absl::StrAppend(&block, line, "\n");
      ++frames;
    } else if (absl::StartsWith(line, "nr_base_pages:")) {
      if (distinct.insert(block).second)
        hash_bytes += (32 + 8 * frames + 15) / 16 * 16;
      block.clear();
      frames = 0;
    }
  }
  EXPECT_EQ(s.trie().traces(), distinct.size());
  EXPECT_EQ(s.trie().hash_bytes(), hash_bytes);
  EXPECT_GT(s.trie().trie_bytes(), 0u);
  EXPECT_GE(s.trie().trie_pools(), 1u);
  EXPECT_EQ(s.unknown_size(), 0) << s.DebugString();

  v1::Predictions p = EvaluateAll(s);
  EXPECT_TRUE(p.vmap_purge().applies());
  EXPECT_EQ(p.vmap_purge().flushes_per_purge(), 2805u);  // seed 004
  EXPECT_FALSE(p.vmap_purge().combined_flushes());
  EXPECT_EQ(p.vmap_purge().risk(), v1::RISK_STALL);
  EXPECT_TRUE(p.stack_depot().applies());
  EXPECT_NEAR(p.stack_depot().budget_ratio(), 7950.0 / 8192, 1e-9);
  EXPECT_GE(p.stack_depot().risk(), v1::RISK_WARNING);
  EXPECT_EQ(p.stack_depot().trie().source(),
            v1::TrieEstimate::SOURCE_HOST_TRACES);
}

TEST(FixtureHostsTest, NoTracefsMakesFgraphUnknownNotZero) {
  v1::HostSnapshot s = CollectFixture("no-tracefs");
  EXPECT_FALSE(s.fgraph().has_tracefs_path());
  EXPECT_FALSE(s.fgraph().has_active());
  EXPECT_FALSE(s.fgraph().has_available_filter_functions());
  EXPECT_NE(UnknownReason(s, "fgraph.tracefs_path"), "");
  EXPECT_NE(UnknownReason(s, "fgraph.active"), "");
  EXPECT_NE(UnknownReason(s, "stackdepot.pools").find("debugfs"),
            std::string::npos);
  EXPECT_FALSE(s.stackdepot().has_pools());
  // Without debugfs, the preemption mode comes from the config.
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_VOLUNTARY);
  EXPECT_EQ(s.kernel().preempt_source(), "config");
  // N_null is still bounded (an upper bound: all threads).
  EXPECT_EQ(s.fgraph().null_threads_bound(), 412u);
  v1::Predictions p = EvaluateAll(s);
  EXPECT_LT(
      Attach(p, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER).basis().confidence(),
      1.0);
}

std::string NotApplicableReason(const v1::HostSnapshot& s,
                                const std::string& input) {
  for (const v1::NotApplicableInput& n : s.not_applicable()) {
    if (n.input() == input) return n.reason();
  }
  return "";
}

// The 6.1 host has no CONFIG_STACKDEPOT_MAX_FRAMES (6.8), no page_owner and
// no KASAN vmalloc shadow: not applicable, not unknown, and the stack depot
// prediction loses no confidence for the option.
TEST(FixtureHostsTest, WhatA61KernelLacksIsNotApplicable) {
  v1::HostSnapshot s = CollectFixture("no-tracefs");
  EXPECT_EQ(NotApplicableReason(s, "kernel.config_stackdepot_max_frames"),
            "CONFIG_STACKDEPOT_MAX_FRAMES does not exist on this release "
            "(stackdepot_max_frames: since 6.8 -> 6.1.0: no)");
  EXPECT_EQ(NotApplicableReason(s, "trie"),
            "CONFIG_PAGE_OWNER is off: no page_owner stacks");
  EXPECT_EQ(NotApplicableReason(s, "vmalloc.unpurged_areas"),
            "CONFIG_KASAN_VMALLOC is off: no vmalloc shadow to purge "
            "(/proc/vmallocinfo not read)");
  EXPECT_EQ(s.not_applicable_size(), 3);
  for (const char* input : {"kernel.config_stackdepot_max_frames", "trie",
                            "vmalloc.unpurged_areas"}) {
    EXPECT_EQ(UnknownReason(s, input), "") << input;
  }
  v1::Predictions p = EvaluateAll(s);
  const v1::Basis& b = p.stack_depot().basis();
  // Only the pool count is missing (no debugfs): 1 - 0.3. The pool budget
  // is the kernel's hard cap before 6.17 (measured, not assumed).
  EXPECT_DOUBLE_EQ(b.confidence(), 1.0 - 0.3);
  bool listed = false;
  for (const v1::BasisInput& in : b.inputs()) {
    if (in.name() != "kernel.config_stackdepot_max_frames") continue;
    listed = true;
    EXPECT_EQ(in.source(), v1::INPUT_SOURCE_NOT_APPLICABLE);
    EXPECT_EQ(in.value(), "none");
  }
  EXPECT_TRUE(listed) << b.DebugString();
}

// Debian 6.1, PREEMPT_DYNAMIC booted voluntary (its default), a QEMU TCG
// guest with 128,000 threads. Such a kernel walked for well over 100 s and
// logged neither a soft lockup nor an RCU stall: every pass reschedules.
TEST(FixtureHostsTest, VoluntaryDynamic61With128kThreads) {
  v1::HostSnapshot s = CollectFixture("preempt-voluntary-dynamic-6.1-128k");
  EXPECT_EQ(s.kernel().release(), "6.1.0-28-amd64");
  EXPECT_EQ(s.kernel().upstream_version(), "6.1.119");
  EXPECT_EQ(s.kernel().upstream_version_source(),
            "/proc/version (Debian 6.1.119-1)");
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_VOLUNTARY);
  EXPECT_EQ(s.kernel().preempt_source(), "debugfs sched/preempt");
  EXPECT_TRUE(s.kernel().preempt_dynamic());
  EXPECT_TRUE(s.kernel().config_preempt_rcu());
  EXPECT_EQ(s.cpus().model_name(), "QEMU TCG CPU version 2.5+");
  EXPECT_TRUE(s.cpus().hypervisor());
  EXPECT_EQ(s.threads().total(), 128000u);
  EXPECT_EQ(s.fgraph().ftrace_filter_functions(), 0u);

  v1::Predictions p = EvaluateAll(s);
  const v1::AttachPrediction& fg =
      Attach(p, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  // V = 256,067,999: 88.7e-9 * V + 2e-6 * 4000 + 20e-9 * 128,000 = 22.72 s,
  // plus 2,000 sites at 1 us.
  EXPECT_NEAR(fg.walk_seconds(), 22.7238, 1e-3);
  EXPECT_NEAR(fg.latency_seconds(), 22.7258, 1e-3);
  // Blocks, holding ftrace_lock, but never 20 s without rescheduling: one
  // pass is 88.7e-9 * 128,000 + 2e-6 = 11.36 ms.
  EXPECT_EQ(fg.risk(), v1::RISK_LATENCY);
  EXPECT_NEAR(fg.non_yielding_seconds(), 0.0113556, 1e-9);
  EXPECT_NEAR(fg.lock_seconds(), fg.latency_seconds(), 1e-12);
  // The stall checks are far below; ftrace_lock waiters sleep for the whole
  // 22.73 s, 22.7258 / 120 = 0.1894 of the hung-task timeout.
  int hung_checks = 0;
  for (const v1::ThresholdCheck& c : fg.checks()) {
    EXPECT_TRUE(c.applies());
    if (c.kind() == v1::ThresholdCheck::KIND_HUNG_TASK) {
      ++hung_checks;
      EXPECT_NEAR(c.margin(), 0.189382, 1e-5);
      continue;
    }
    EXPECT_LT(c.margin(), 0.01) << c.kind();
  }
  EXPECT_EQ(hung_checks, 1);
  EXPECT_EQ(fg.hung_task(), v1::HUNG_TASK_RISK_NONE);
  // 6.1: 2 KiB shadow stacks: 128,000 x 2048 B.
  EXPECT_EQ(fg.shadow_stack_bytes(), 262144000u);
  // An emulated CPU: lower confidence, said in the summary.
  EXPECT_EQ(fg.cpu_class(), v1::CPU_CLASS_EMULATED);
  EXPECT_LT(fg.basis().confidence(), 0.7);
  EXPECT_TRUE(absl::StrContains(fg.summary(), "PREEMPT_VOLUNTARY reschedules"))
      << fg.summary();
  EXPECT_FALSE(absl::StrContains(fg.summary(), "soft lockup")) << fg.summary();
  EXPECT_LT(p.worst_risk(), v1::RISK_WARNING);
}

// Debian 6.1, PREEMPT_DYNAMIC booted preempt=none, 200,000 threads, bare
// metal: a soft lockup, but no RCU stall (CONFIG_PREEMPT_RCU=y).
TEST(FixtureHostsTest, NoneDynamic61With200kThreads) {
  v1::HostSnapshot s = CollectFixture("preempt-none-dynamic-6.1-200k");
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_NONE);
  EXPECT_TRUE(absl::StrContains(s.kernel().cmdline(), "preempt=none"));
  EXPECT_TRUE(s.kernel().config_preempt_rcu());
  EXPECT_FALSE(s.cpus().hypervisor());
  EXPECT_EQ(s.cpus().possible(), 112u);

  v1::Predictions p = EvaluateAll(s);
  const v1::AttachPrediction& fg =
      Attach(p, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  // V = 625,106,249: 88.7e-9 * V + 2e-6 * 6250 + 20e-9 * 200,000 = 55.46 s.
  EXPECT_NEAR(fg.walk_seconds(), 55.4634, 1e-3);
  EXPECT_EQ(fg.risk(), v1::RISK_STALL);
  const v1::ThresholdCheck* soft = nullptr;
  const v1::ThresholdCheck* rcu = nullptr;
  for (const v1::ThresholdCheck& c : fg.checks()) {
    if (c.kind() == v1::ThresholdCheck::KIND_SOFT_LOCKUP) soft = &c;
    if (c.kind() == v1::ThresholdCheck::KIND_RCU_STALL) rcu = &c;
  }
  ASSERT_TRUE(soft && rcu);
  EXPECT_TRUE(soft->applies());
  // The stretch the watchdog sees is the walk and, joined to it on NONE,
  // the patching of the 2,000 filter functions at 1 us (x86's
  // ftrace_replace_code() has no reschedule point): 55.4654 s.
  EXPECT_NEAR(soft->margin(), (55.4634 + 2000 * 1e-6) / 20, 1e-5);
  EXPECT_TRUE(rcu->applies());
  // One pass without a quiescent state: 17.74 ms.
  EXPECT_NEAR(rcu->predicted(), 0.017742, 1e-9);
  EXPECT_LT(rcu->margin(), 1.0);
  // The fitted CPU class: the summary names the lockup, not the CPU.
  EXPECT_EQ(fg.cpu_class(), v1::CPU_CLASS_FITTED);
  EXPECT_TRUE(absl::StrContains(fg.summary(), "predicts a soft lockup"))
      << fg.summary();
  // Entry-only kprobe_multi on 6.1 is on rethook: no walk.
  EXPECT_FALSE(Attach(p, v1::PROBE_KIND_KPROBE_MULTI).uses_fgraph());
}

TEST(FixtureHostsTest, ForkDeltaAfterFgraphStopped) {
  // fgraph active on the 6.19 host, then the tracer is stopped and 300
  // tasks are forked: N_null is bounded by the fork delta.
  std::string root = CopyFixture("fgraph-active-6.19");
  std::string state = NewTempDir("state-");
  absl::Time now = kNow;
  HostFs fs(root);
  CollectorOptions o;
  o.state_dir = state;
  {
    Collector c(&fs, o, [&] { return now; });
    EXPECT_TRUE(c.Collect().fgraph().active());
  }
  ASSERT_TRUE(
      WriteFile(root + "/sys/kernel/tracing/instances/foo/current_tracer",
                "nop\n")
          .ok());
  auto stat = ReadFile(root + "/proc/stat");
  ASSERT_TRUE(stat.ok());
  std::string s2 = *stat;
  s2.replace(s2.find("processes 2222222"), 17, "processes 2222522");
  ASSERT_TRUE(WriteFile(root + "/proc/stat", s2).ok());
  now += absl::Minutes(3);
  Collector c(&fs, o, [&] { return now; });  // a restarted agent
  v1::HostSnapshot s = c.Collect();
  EXPECT_FALSE(s.fgraph().active());
  EXPECT_EQ(s.fgraph().null_threads_bound(), 300u);
  EXPECT_EQ(s.fgraph().forks_at_last_active(), 2222222u);
  EXPECT_EQ(s.fgraph().last_active_at().seconds(), absl::ToUnixSeconds(kNow));
  v1::Predictions p = EvaluateAll(s);
  EXPECT_EQ(Attach(p, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER).null_threads(),
            300u);
}

// arm64 6.18.33 with 16 KiB pages, a Neoverse-V2 (AWS Graviton4), holding an
// entry-only BPF kprobe_multi link. The values worked out by hand:
//  - page size 16384 (CONFIG_ARM64_16K_PAGES=y, CONFIG_PAGE_SIZE_16KB=y,
//    CONFIG_PAGE_SHIFT=14);
//  - MIDR_EL1 0x410fd4f1 = 0x41 << 24 | 0 << 20 | 0xf << 16 | 0xd4f << 4 | 1:
//    Arm's part 0xd4f, lscpu's "Neoverse-V2"; hardware class "Neoverse-V2 /
//    6.18";
//  - caches: L1d 64K = 65,536 B, L2 2048K = 2,097,152 B, L3 36864K =
//    37,748,736 B;
//  - stack depot with 16 KiB pages: a pool is 4 pages, 65,536 B;
//    DEPOT_OFFSET_BITS = 2 + 14 - 4 = 12, DEPOT_POOL_INDEX_BITS = 32 - 12 -
//    5 = 15, so the limit is 2^15 - 1 = 32,767 and the default min(32,767,
//    8,192) = 8,192. Of "stack_depot_max_pools=20000
//    stack_depot_max_pools=40000" the kernel refuses 40,000 (above 32,767;
//    with 4 KiB pages, limit 131,071, it would be taken), so 20,000 stands:
//    6 pools are 6 / 20,000 = 0.0003 of the budget;
//  - the entry-only fprobe moved off fgraph in 6.18.32 on x86-64 but only in
//    6.18.34 on arm64 (row fprobe_entry_only_off_fgraph): on this arm64
//    6.18.33 the link's kprobe_multi sits on fgraph, so fgraph is active and
//    a new user's init_task_vars() walks the 60,000 threads once: 88.7e-9 *
//    60,000 + 2e-6 = 5.324 ms;
//  - no hypervisor flag exists in arm64's /proc/cpuinfo: unknown, the one
//    unknown input.
TEST(FixtureHostsTest, Arm64With16kPagesOn61833) {
  v1::HostSnapshot s = CollectFixture("arm64-16k-6.18.33");
  EXPECT_EQ(s.kernel().release(), "6.18.33");
  EXPECT_EQ(s.kernel().arch(), "aarch64");
  EXPECT_EQ(s.kernel().page_size(), 16384u);
  EXPECT_EQ(s.kernel().config_source(), "/proc/config.gz");
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_VOLUNTARY);
  EXPECT_EQ(s.cpus().online(), 64u);
  EXPECT_EQ(s.cpus().possible(), 64u);
  EXPECT_EQ(s.cpus().model_name(), "Neoverse-V2");
  EXPECT_EQ(s.cpus().midr_el1(), 0x410fd4f1u);
  EXPECT_EQ(HardwareClass(s.cpus().model_name(), s.kernel().release()),
            "Neoverse-V2 / 6.18");
  EXPECT_EQ(s.cpus().l1d_cache_bytes(), 65536u);
  EXPECT_EQ(s.cpus().l2_cache_bytes(), 2097152u);
  EXPECT_EQ(s.cpus().l3_cache_bytes(), 37748736u);
  EXPECT_FALSE(s.cpus().invlpgb());
  EXPECT_FALSE(s.cpus().has_hypervisor());
  ASSERT_EQ(s.unknown_size(), 1) << s.DebugString();
  EXPECT_EQ(s.unknown(0).input(), "cpus.hypervisor");
  EXPECT_EQ(s.unknown(0).reason(),
            "/proc/cpuinfo has no hypervisor flag on this architecture (its "
            "Features line lists hwcaps)");

  EXPECT_EQ(DepotPoolLimit(16384), 32767u);
  EXPECT_EQ(DepotPoolLimit(4096), 131071u);
  EXPECT_EQ(s.stackdepot().pools(), 6u);
  EXPECT_EQ(s.stackdepot().max_pools(), 20000u);
  EXPECT_EQ(s.stackdepot().max_pools_source(),
            "cmdline stack_depot_max_pools=");

  ASSERT_EQ(s.fgraph().users_size(), 1);
  EXPECT_EQ(s.fgraph().users(0).kind(), v1::FgraphUser::KIND_BPF_KPROBE_MULTI);
  EXPECT_TRUE(s.fgraph().active());
  EXPECT_EQ(s.fgraph().null_threads_bound(), 0u);

  v1::Predictions p = EvaluateAll(s);
  EXPECT_EQ(p.stack_depot().pool_bytes(), 65536u);
  EXPECT_EQ(p.stack_depot().max_pools(), 20000u);
  EXPECT_NEAR(p.stack_depot().budget_ratio(), 0.0003, 1e-12);
  for (v1::ProbeKind k :
       {v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, v1::PROBE_KIND_KPROBE_MULTI}) {
    const v1::AttachPrediction& a = Attach(p, k);
    EXPECT_TRUE(a.uses_fgraph()) << k;
    EXPECT_TRUE(a.fgraph_already_active()) << k;
    EXPECT_NEAR(a.walk_seconds(), 88.7e-9 * 60000 + 2e-6, 1e-9) << k;
    EXPECT_EQ(a.cpu_class(), v1::CPU_CLASS_OTHER) << k;
  }
}

// The same tree as an x86-64 kernel: 6.18.33 has the entry-only backport
// there (6.18.32), so the link is no fgraph user and an entry-only
// kprobe_multi does not walk.
TEST(FixtureHostsTest, Arm64HostsEntryOnlyRowDiffersFromX86) {
  const std::string root = CopyFixture("arm64-16k-6.18.33");
  ASSERT_TRUE(WriteFile(root + "/proc/sys/kernel/arch", "x86_64\n").ok());
  HostFs fs(root);
  Collector c(&fs, CollectorOptions(), [] { return kNow; });
  v1::HostSnapshot s = c.Collect();
  EXPECT_EQ(s.fgraph().users_size(), 0);
  EXPECT_FALSE(s.fgraph().active());
  EXPECT_FALSE(
      Attach(EvaluateAll(s), v1::PROBE_KIND_KPROBE_MULTI).uses_fgraph());
}

}  // namespace
}  // namespace tracehealth::testing
