#include "agent/events/event_extractor.h"

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

// Feeds the records of `log` (one "PRI,SEQ,TS,FLAGS;TEXT" a line) and then
// `idles` idle calls; returns what completed.
std::vector<v1::ObservedEvent> Extract(EventExtractor& x,
                                       const std::string& log, int idles = 0) {
  std::vector<v1::ObservedEvent> out;
  for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipEmpty())) {
    absl::StatusOr<KmsgRecord> r = ParseKmsgRecord(line);
    EXPECT_TRUE(r.ok()) << line << ": " << r.status();
    if (r.ok()) x.Add(*r, &out);
  }
  for (int i = 0; i < idles; ++i) x.Idle(&out);
  return out;
}

// An RCU stall on a 6.x kernel during the fgraph walk of a bpftrace
// kprobe_multi attach, as /dev/kmsg gives it (tabs escaped).
constexpr char kRcuStall[] =
    "6,8001,84200100200,-;bpftrace[160141]: attaching 2 probes\n"
    "3,8002,84221100300,-;rcu: INFO: rcu_sched self-detected stall on CPU\n"
    "3,8003,84221100310,-;rcu: \\x090-....: (20718 ticks this GP) "
    "idle=7a4c/1/0x4000000000000000 softirq=21144/21144 fqs=5194\n"
    "3,8004,84221100320,-;rcu: \\x09(t=21000 jiffies g=913 q=8 ncpus=8)\n"
    "4,8005,84221100330,-;CPU: 0 UID: 0 PID: 160141 Comm: bpftrace Not "
    "tainted 6.16.12-cloud-amd64 #1 PREEMPT(none)  Debian 6.16.12-1\n"
    "4,8006,84221100340,-;Hardware name: Intel Corporation S2600WF/S2600WF\n"
    "4,8007,84221100350,-;RIP: 0010:___slab_alloc+0x549/0xa20\n"
    "4,8008,84221100360,-;RSP: 0018:ffffc9000cb3fb60 EFLAGS: 00000246\n"
    "4,8009,84221100370,-;Call Trace:\n"
    "4,8010,84221100380,-; <IRQ>\n"
    "4,8011,84221100390,-; ? rcu_dump_cpu_stacks+0x12c/0x1a0\n"
    "4,8012,84221100400,-; ? rcu_sched_clock_irq+0x6c2/0x1160\n"
    "4,8013,84221100410,-; </IRQ>\n"
    "4,8014,84221100420,-; <TASK>\n"
    "4,8015,84221100430,-; ___slab_alloc+0x549/0xa20\n"
    "4,8016,84221100440,-; kmem_cache_alloc_noprof+0x16c/0x340\n"
    "4,8017,84221100450,-; register_ftrace_graph+0x3d7/0x6c0\n"
    "4,8018,84221100460,-; register_fprobe_ips+0x2d5/0x310\n"
    "4,8019,84221100470,-; bpf_kprobe_multi_link_attach+0x218/0x7e0\n"
    "4,8020,84221100480,-; __sys_bpf+0x267a/0x27a0\n"
    "4,8021,84221100490,-; </TASK>\n"
    "6,8022,84221200000,-;e1000e: eno1 NIC Link is Up\n";

TEST(EventExtractorTest, AnRcuStallDuringTheFgraphWalk) {
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, kRcuStall);
  ASSERT_EQ(got.size(), 1u);
  const v1::ObservedEvent& e = got[0];
  EXPECT_EQ(e.kind(), v1::OBSERVED_EVENT_KIND_RCU_STALL);
  EXPECT_EQ(e.kmsg_seq(), 8002u);
  EXPECT_EQ(e.ts_usec(), 84221100300u);
  EXPECT_EQ(e.rcu_flavor(), v1::RCU_FLAVOR_SCHED);
  EXPECT_TRUE(e.rcu_self_detected());
  ASSERT_TRUE(e.has_cpu());
  EXPECT_EQ(e.cpu(), 0u);
  ASSERT_TRUE(e.has_stall_jiffies());
  EXPECT_EQ(e.stall_jiffies(), 21000u);
  EXPECT_FALSE(e.has_seconds());
  EXPECT_EQ(e.comm(), "bpftrace");
  ASSERT_TRUE(e.has_pid());
  EXPECT_EQ(e.pid(), 160141u);
  EXPECT_EQ(e.message(), "rcu: INFO: rcu_sched self-detected stall on CPU");
  EXPECT_EQ(e.model(), v1::EVENT_MODEL_FGRAPH_ATTACH);
  EXPECT_EQ(e.matched_symbol(), "bpf_kprobe_multi_link_attach");
  EXPECT_EQ(std::vector<int>(e.probe_kinds().begin(), e.probe_kinds().end()),
            (std::vector<int>{v1::PROBE_KIND_KPROBE_MULTI,
                              v1::PROBE_KIND_KPROBE_MULTI_RETURN,
                              v1::PROBE_KIND_KPROBE_SESSION}));
  // 2 guesses in the IRQ part + 6 reliable frames.
  EXPECT_EQ(e.frames_total(), 8u);
  EXPECT_EQ(
      std::vector<std::string>(e.frames().begin(), e.frames().end()),
      (std::vector<std::string>{"___slab_alloc+0x549/0xa20",
                                "kmem_cache_alloc_noprof+0x16c/0x340",
                                "register_ftrace_graph+0x3d7/0x6c0",
                                "register_fprobe_ips+0x2d5/0x310",
                                "bpf_kprobe_multi_link_attach+0x218/0x7e0",
                                "__sys_bpf+0x267a/0x27a0"}));
  EXPECT_FALSE(x.open_seq().has_value());
}

TEST(EventExtractorTest, ASoftLockupAndAHungTask) {
  // A soft lockup of a KASAN purge worker, then a hung task in the journal.
  const std::string log =
      "0,500,7100000000,-;watchdog: BUG: soft lockup - CPU#28 stuck for 22s! "
      "[kworker/28:1:1760]\n"
      "4,501,7100000010,-;Modules linked in: kvm_intel kvm irqbypass\n"
      "4,502,7100000020,-;CPU: 28 PID: 1760 Comm: kworker/28:1 Kdump: "
      "loaded Not tainted 6.12.5 #1\n"
      "4,503,7100000030,-;Workqueue: events drain_vmap_area_work\n"
      "4,504,7100000040,-;Call Trace:\n"
      "4,505,7100000050,-; <TASK>\n"
      "4,506,7100000060,-; ? asm_sysvec_apic_timer_interrupt+0x16/0x20\n"
      "4,507,7100000070,-;RIP: 0010:smp_call_function_many_cond+0x1d8/0xbb0\n"
      "4,508,7100000080,-;RAX: 0000000000000011 RBX: ffff8883bc4469c0\n"
      "4,509,7100000090,-; on_each_cpu_cond_mask+0x20/0x40\n"
      "4,510,7100000100,-; ? kasan_release_vmalloc+0xa7/0xc0\n"
      "4,511,7100000110,-; __purge_vmap_area_lazy+0x5b8/0xa10\n"
      "4,512,7100000120,-; drain_vmap_area_work+0x21/0x30\n"
      "4,513,7100000130,-; </TASK>\n"
      "3,600,7200000000,-;INFO: task jbd2/nvme0n1p2-8:912 blocked for more "
      "than 120 seconds.\n"
      "3,601,7200000010,-;      Not tainted 6.12.5 #1\n"
      "3,602,7200000020,-;\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" "
      "disables this message.\n"
      "6,603,7200000030,-;task:jbd2/nvme0n1p2-8 state:D stack:0 pid:912\n"
      "6,604,7200000040,-;Call Trace:\n"
      "6,605,7200000050,-; <TASK>\n"
      "6,606,7200000060,-; __schedule+0x3e1/0xb30\n"
      "6,607,7200000070,-; io_schedule+0x46/0x70\n"
      "6,608,7200000080,-; jbd2_journal_commit_transaction+0x1b2/0x1a40\n"
      "6,609,7200000090,-; </TASK>\n";
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, log);
  ASSERT_EQ(got.size(), 2u);
  const v1::ObservedEvent& lockup = got[0];
  EXPECT_EQ(lockup.kind(), v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  EXPECT_EQ(lockup.kmsg_seq(), 500u);
  EXPECT_EQ(lockup.cpu(), 28u);
  EXPECT_EQ(lockup.seconds(), 22u);
  EXPECT_EQ(lockup.comm(), "kworker/28:1");  // a comm with a colon
  EXPECT_EQ(lockup.pid(), 1760u);
  EXPECT_EQ(lockup.rcu_flavor(), v1::RCU_FLAVOR_UNSPECIFIED);
  EXPECT_EQ(lockup.model(), v1::EVENT_MODEL_VMAP_PURGE);
  EXPECT_EQ(lockup.matched_symbol(), "drain_vmap_area_work");
  EXPECT_TRUE(lockup.probe_kinds().empty());
  // The register dump inside the trace does not end it.
  EXPECT_EQ(lockup.frames_total(), 5u);
  EXPECT_EQ(lockup.frames_size(), 3);

  const v1::ObservedEvent& hung = got[1];
  EXPECT_EQ(hung.kind(), v1::OBSERVED_EVENT_KIND_HUNG_TASK);
  EXPECT_EQ(hung.kmsg_seq(), 600u);
  EXPECT_EQ(hung.comm(), "jbd2/nvme0n1p2-8");
  EXPECT_EQ(hung.pid(), 912u);
  EXPECT_EQ(hung.seconds(), 120u);
  EXPECT_FALSE(hung.has_cpu());
  EXPECT_EQ(hung.model(), v1::EVENT_MODEL_UNATTRIBUTED);
  EXPECT_EQ(hung.matched_symbol(), "");
  EXPECT_EQ(hung.frames_size(), 3);
}

TEST(EventExtractorTest, TheStuckFunctionOnlyInTheRegisterDump) {
  // Debian's 6.1.0-57-cloud-amd64 under qemu, preempt=none, writing
  // function_graph to current_tracer with 49152 idle threads (tests/lab):
  // alloc_retstack_tasklist and start_graph_tracing are inlined into
  // register_ftrace_graph, which only the RIP line names; the trace starts
  // at its caller.
  const std::string log =
      "0,1210,44399671,-;watchdog: BUG: soft lockup - CPU#0 stuck for 3s! "
      "[lab_threads:49456]\n"
      "4,1211,44400407,-;Modules linked in:\n"
      "4,1212,44400554,-;CPU: 0 PID: 49456 Comm: lab_threads Not tainted "
      "6.1.0-57-cloud-amd64 #1  Debian 6.1.192-3\n"
      "4,1213,44400640,-;Hardware name: QEMU Standard PC (i440FX + PIIX, "
      "1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014\n"
      "4,1214,44400720,-;RIP: 0010:register_ftrace_graph+0x134/0x300\n"
      "4,1215,44401060,-;RSP: 0018:ffffc928e05b3bd8 EFLAGS: 00000286\n"
      "4,1216,44401083,-;RAX: ffff8910ca5e8000 RBX: 0000000000000000 RCX: "
      "ffff8910c19df180\n"
      "4,1217,44401336,-;Call Trace:\n"
      "4,1218,44401786,-; <TASK>\n"
      "4,1219,44401898,-; graph_trace_init+0x43/0x50\n"
      "4,1220,44401972,-; tracing_set_tracer+0x15c/0x270\n"
      "4,1221,44401985,-; tracing_set_trace_write+0x9f/0xe0\n"
      "4,1222,44402002,-; vfs_write+0xc7/0x3f0\n"
      "4,1223,44402023,-; ? __rseq_handle_notify_resume+0xa9/0x480\n"
      "4,1224,44402052,-; ksys_write+0x6b/0xf0\n"
      "4,1225,44402061,-; do_syscall_64+0x5d/0x90\n"
      "4,1226,44402178,-; entry_SYSCALL_64_after_hwframe+0x6e/0xd8\n"
      "4,1227,44402270,-;RIP: 0033:0x43c4d0\n"
      "4,1228,44402545,-; </TASK>\n";
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, log);
  ASSERT_EQ(got.size(), 1u);
  const v1::ObservedEvent& e = got[0];
  EXPECT_EQ(e.kind(), v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  EXPECT_EQ(e.seconds(), 3u);
  EXPECT_EQ(e.cpu(), 0u);
  EXPECT_EQ(e.comm(), "lab_threads");
  EXPECT_EQ(e.model(), v1::EVENT_MODEL_FGRAPH_ATTACH);
  EXPECT_EQ(e.matched_symbol(), "register_ftrace_graph");
  EXPECT_EQ(std::vector<int>(e.probe_kinds().begin(), e.probe_kinds().end()),
            (std::vector<int>{v1::PROBE_KIND_FUNCTION_GRAPH_TRACER}));
  // The frames are the trace's: 8 lines, 7 of them reliable; the RIP line
  // is no frame.
  EXPECT_EQ(e.frames_total(), 8u);
  ASSERT_EQ(e.frames_size(), 7);
  EXPECT_EQ(e.frames(0), "graph_trace_init+0x43/0x50");
}

TEST(EventExtractorTest, TheNextHeaderEndsAnEventWithoutItsEnd) {
  // arm64 prints no <TASK> markers; a second lockup follows the first.
  const std::string log =
      "0,10,1000,-;watchdog: BUG: soft lockup - CPU#3 stuck for 23s! "
      "[bpftrace:4242]\n"
      "4,11,1001,-;Call trace:\n"
      "4,12,1002,-;  alloc_retstack_tasklist+0x5a/0x1f0\n"
      "4,13,1003,-;  start_graph_tracing+0x9c/0x140\n"
      "0,14,2000,-;watchdog: BUG: soft lockup - CPU#3 stuck for 49s! "
      "[bpftrace:4242]\n";
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, log);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kmsg_seq(), 10u);
  EXPECT_EQ(got[0].seconds(), 23u);
  EXPECT_EQ(got[0].model(), v1::EVENT_MODEL_FGRAPH_ATTACH);
  EXPECT_EQ(got[0].matched_symbol(), "start_graph_tracing");
  // The second is open until the log goes quiet for a whole cycle.
  ASSERT_TRUE(x.open_seq().has_value());
  EXPECT_EQ(*x.open_seq(), 14u);
  std::vector<v1::ObservedEvent> more;
  x.Idle(&more);  // fed since the last idle: kept open
  EXPECT_TRUE(more.empty());
  x.Idle(&more);  // nothing since: completed
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].kmsg_seq(), 14u);
  EXPECT_EQ(more[0].seconds(), 49u);
  EXPECT_EQ(more[0].model(), v1::EVENT_MODEL_UNATTRIBUTED);
  EXPECT_FALSE(x.open_seq().has_value());
}

TEST(EventExtractorTest, AnotherLineAfterTheFramesEndsTheEvent) {
  const std::string log =
      "0,1,1,-;watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [a:1]\n"
      "4,2,2,-; alloc_retstack_tasklist+0x5a/0x1f0\n"
      "6,3,3,-;usb 1-1: new high-speed USB device number 2\n"
      "4,4,4,-; register_ftrace_graph+0x3d7/0x6c0\n";
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, log);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].frames_size(), 1);
  EXPECT_FALSE(x.open_seq().has_value());
}

TEST(EventExtractorTest, LinesBeforeTheFirstFrameAreSkipped) {
  // Other CPUs log between the header and the trace.
  const std::string log =
      "3,1,1,-;INFO: task bpftrace:77 blocked for more than 245 seconds.\n"
      "6,2,2,-;usb 1-1: new high-speed USB device number 2\n"
      "6,3,3,-; <TASK>\n"
      "6,4,4,-; __mutex_lock.constprop.0+0x2d1/0x8a0\n"
      "6,5,5,-; register_ftrace_graph+0x41/0x6c0\n"
      "6,6,6,-; graph_trace_init+0x24/0x60\n"
      "6,7,7,-; </TASK>\n";
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, log);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].seconds(), 245u);
  EXPECT_EQ(got[0].model(), v1::EVENT_MODEL_FGRAPH_ATTACH);
  EXPECT_EQ(got[0].probe_kinds_size(), 1);
  EXPECT_EQ(got[0].probe_kinds(0), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_EQ(got[0].frames(0), "__mutex_lock.constprop.0+0x2d1/0x8a0");
}

TEST(EventExtractorTest, RcuFlavoursAndTheDetectedByForm) {
  const std::string log =
      "3,1,1,-;rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n"
      "3,2,2,-;rcu: \\x093-...!: (1 GPs behind) idle=b4c/0/0x1\n"
      "3,3,3,-;rcu: \\x09(detected by 1, t=60002 jiffies, g=10009, q=213)\n"
      "3,9,9,-;INFO: rcu_tasks detected stalls on tasks:\n";
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, log, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].rcu_flavor(), v1::RCU_FLAVOR_PREEMPT);
  EXPECT_FALSE(got[0].rcu_self_detected());
  EXPECT_EQ(got[0].cpu(), 3u);
  EXPECT_EQ(got[0].stall_jiffies(), 60002u);
  EXPECT_EQ(got[1].rcu_flavor(), v1::RCU_FLAVOR_OTHER);
  EXPECT_EQ(got[1].kmsg_seq(), 9u);
}

TEST(EventExtractorTest, KeepsAtMost16FramesOf128PrintableBytes) {
  std::string log =
      "0,1,1,-;watchdog: BUG: soft lockup - CPU#0 stuck for "
      "22s! [we\xff\x01ird name:9]\n";
  const std::string long_name(200, 'f');
  for (int i = 0; i < 20; ++i) {
    log += "4," + std::to_string(2 + i) + ",2,-; " + long_name +
           std::to_string(i) + "+0x1/0x2\n";
  }
  log += "4,30,3,-; </TASK>\n";
  EventExtractor x;
  std::vector<v1::ObservedEvent> got = Extract(x, log);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].frames_total(), 20u);
  EXPECT_EQ(got[0].frames_size(), 16);
  for (const std::string& f : got[0].frames()) EXPECT_EQ(f.size(), 128u);
  // Bytes outside printable ASCII as \xNN: 2 + 4 + 4 + 10.
  EXPECT_EQ(got[0].comm(), "we\\xff\\x01ird name");
}

TEST(EventExtractorTest, AnEndlessDumpEndsAtTheRecordBound) {
  EventExtractor::Limits limits;
  limits.max_block_records = 5;
  EventExtractor x(limits);
  std::string log =
      "0,1,1,-;watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [a:1]\n";
  for (int i = 2; i <= 10; ++i) {
    log += "4," + std::to_string(i) + ",1,-;Modules linked in: x\n";
  }
  std::vector<v1::ObservedEvent> got = Extract(x, log);
  ASSERT_EQ(got.size(), 1u);  // at record 5 (the header and four more)
  EXPECT_FALSE(x.open_seq().has_value());
}

TEST(EventExtractorTest, PrintableAsciiNeverSplitsAnEscape) {
  EXPECT_EQ(PrintableAscii("abc", 3), "abc");
  EXPECT_EQ(PrintableAscii("abcd", 3), "abc");
  EXPECT_EQ(PrintableAscii("ab\x1b", 5), "ab");  // \x1b needs 4 bytes
  EXPECT_EQ(PrintableAscii("ab\x1b", 6), "ab\\x1b");
  EXPECT_EQ(PrintableAscii("\x7f\x80", 8), "\\x7f\\x80");
}

}  // namespace
}  // namespace tracehealth::agent
