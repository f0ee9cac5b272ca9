#include "agent/events/event_headers.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(EventHeaderTest, SoftLockup) {
  // The form of kernel/watchdog.c, with its pr_fmt prefix.
  auto e = ParseEventHeader(
      "watchdog: BUG: soft lockup - CPU#28 stuck for 22s! [kworker/28:1:1760]");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  EXPECT_EQ(e->cpu(), 28u);
  EXPECT_EQ(e->seconds(), 22u);
  EXPECT_EQ(e->comm(), "kworker/28:1");
  EXPECT_EQ(e->pid(), 1760u);
  // Older kernels: "NMI watchdog: ..."; a comm with spaces and brackets.
  e = ParseEventHeader(
      "NMI watchdog: BUG: soft lockup - CPU#3 stuck for 41s! [Web [x]:99]");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->comm(), "Web [x]");
  EXPECT_EQ(e->pid(), 99u);
}

TEST(EventHeaderTest, SoftLockupCutShortKeepsWhatItHas) {
  auto e = ParseEventHeader("watchdog: BUG: soft lockup - CPU#7 stuck for ");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->cpu(), 7u);
  EXPECT_FALSE(e->has_seconds());
  EXPECT_FALSE(e->has_pid());
  e = ParseEventHeader("watchdog: BUG: soft lockup - CPU#x");
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->has_cpu());
  // 2^32 seconds do not fit the field: left unset; 2^32 - 1 does.
  e = ParseEventHeader(
      "watchdog: BUG: soft lockup - CPU#1 stuck for 4294967296s! [a:1]");
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->has_seconds());
  EXPECT_EQ(e->pid(), 1u);
  e = ParseEventHeader(
      "watchdog: BUG: soft lockup - CPU#1 stuck for 4294967295s! [a:x]");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->seconds(), 4294967295u);
  EXPECT_FALSE(e->has_pid());  // not a number
  EXPECT_EQ(e->comm(), "");
}

TEST(EventHeaderTest, HungTask) {
  auto e = ParseEventHeader(
      "INFO: task kworker/u8:2:1234 blocked for more than 122 seconds.");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), v1::OBSERVED_EVENT_KIND_HUNG_TASK);
  EXPECT_EQ(e->comm(), "kworker/u8:2");
  EXPECT_EQ(e->pid(), 1234u);
  EXPECT_EQ(e->seconds(), 122u);
  EXPECT_FALSE(e->has_cpu());
  // Newer trees append a counter.
  e = ParseEventHeader(
      "INFO: task bpftrace:77 blocked for more than 245 seconds. [#2]");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->seconds(), 245u);
}

TEST(EventHeaderTest, RcuStalls) {
  auto e = ParseEventHeader("rcu: INFO: rcu_sched self-detected stall on CPU");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind(), v1::OBSERVED_EVENT_KIND_RCU_STALL);
  EXPECT_EQ(e->rcu_flavor(), v1::RCU_FLAVOR_SCHED);
  EXPECT_TRUE(e->rcu_self_detected());
  EXPECT_FALSE(e->has_stall_jiffies());
  e = ParseEventHeader("rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rcu_flavor(), v1::RCU_FLAVOR_PREEMPT);
  EXPECT_FALSE(e->rcu_self_detected());
  // The one-line form of older kernels carries t=.
  e = ParseEventHeader(
      "INFO: rcu_bh detected stalls on CPUs/tasks: { 3} (detected by 0, "
      "t=6002 jiffies, g=1, c=0, q=2)");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rcu_flavor(), v1::RCU_FLAVOR_OTHER);
  EXPECT_EQ(e->stall_jiffies(), 6002u);
}

TEST(EventHeaderTest, OtherLinesAreNoHeaders) {
  for (const char* text : {
           "", "NET: Registered protocol family 10",
           "INFO: lockdep is turned off.", "INFO: task bpftrace:77 exited",
           "INFO: rcu_sched: stalled",                  // no "detected stall"
           "INFO: foo detected stalls on CPUs/tasks:",  // not rcu
           "soft lockup - CPU#1",                       // no "BUG: "
       }) {
    EXPECT_FALSE(ParseEventHeader(text).has_value()) << text;
  }
}

TEST(TaskLineTest, BothForms) {
  auto t = ParseTaskLine(
      "CPU: 0 UID: 0 PID: 160141 Comm: bpftrace Not tainted 6.16.12 #1");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->cpu, 0u);
  EXPECT_EQ(t->pid, 160141u);
  EXPECT_EQ(t->comm, "bpftrace");
  t = ParseTaskLine(
      "CPU: 28 PID: 1760 Comm: kworker/28:1 Kdump: loaded Not tainted 6.10.0");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->cpu, 28u);
  EXPECT_EQ(t->pid, 1760u);
  EXPECT_EQ(t->comm, "kworker/28:1");
  t = ParseTaskLine("CPU: 5 PID: 1 Comm: Web Content Tainted: G  W  6.1.0");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->comm, "Web Content");
  EXPECT_FALSE(ParseTaskLine("CPU: x PID: 1").has_value());
  EXPECT_FALSE(ParseTaskLine("Hardware name: QEMU").has_value());
}

TEST(RcuLinesTest, CpuAndJiffies) {
  EXPECT_EQ(ParseRcuCpuLine("rcu: \\x090-....: (20718 ticks this GP)"), 0u);
  EXPECT_EQ(ParseRcuCpuLine("rcu: \\x0931-...!: (1 GPs behind)"), 31u);
  EXPECT_FALSE(ParseRcuCpuLine("rcu: \\x09(t=21000 jiffies)").has_value());
  EXPECT_FALSE(ParseRcuCpuLine("rcu: 12 ticks").has_value());
  EXPECT_EQ(ParseStallJiffies("rcu: \\x09(t=21000 jiffies g=913 q=8)"), 21000u);
  EXPECT_EQ(ParseStallJiffies("(detected by 1, t=60002 jiffies, g=1)"), 60002u);
  EXPECT_FALSE(ParseStallJiffies("cut=5 jiffies").has_value());
  EXPECT_FALSE(ParseStallJiffies("t=5 seconds").has_value());
}

TEST(RegisterLineTest, RegistersButNotMessages) {
  for (const char* r :
       {"RIP: 0010:smp_call_function_many_cond+0x1d8/0xbb0",
        "RSP: 0018:ffffc9000cb3fb60 EFLAGS: 00000202",
        "RAX: 0000000000000011 RBX: ffff8883bc4469c0",
        "R13: dffffc0000000000 R14: ffffed1077888d38",
        "FS:  0000000000000000(0000) GS:ffff8883bc400000(0000)",
        "CR2: 00005577b5c8d158 CR3: 0000000004850000",
        "Code: 38 c8 7c 08 84 c9 0f 85", "pc : alloc_retstack_tasklist+0x5a"}) {
    EXPECT_TRUE(IsRegisterLine(r)) << r;
  }
  for (const char* m : {"ACPI: PCI Root Bridge", "usb 1-1: new device",
                        "RAX:0000", "TOOLONGREG: 0000", "Workqueue: events"}) {
    EXPECT_FALSE(IsRegisterLine(m)) << m;
  }
}

}  // namespace
}  // namespace tracehealth::agent
