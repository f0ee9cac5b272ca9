#include "common/event_names.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(EventNamesTest, LabelsAreTheMetricsLabels) {
  EXPECT_STREQ(EventKindLabel(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP),
               "soft_lockup");
  EXPECT_STREQ(EventKindLabel(v1::OBSERVED_EVENT_KIND_RCU_STALL), "rcu_stall");
  EXPECT_STREQ(EventKindLabel(v1::OBSERVED_EVENT_KIND_HUNG_TASK), "hung_task");
  EXPECT_STREQ(EventKindLabel(v1::OBSERVED_EVENT_KIND_UNSPECIFIED),
               "unspecified");
  EXPECT_STREQ(EventModelLabel(v1::EVENT_MODEL_FGRAPH_ATTACH), "fgraph");
  EXPECT_STREQ(EventModelLabel(v1::EVENT_MODEL_VMAP_PURGE), "vmap");
  EXPECT_STREQ(EventModelLabel(v1::EVENT_MODEL_STACK_DEPOT), "depot");
  EXPECT_STREQ(EventModelLabel(v1::EVENT_MODEL_UNATTRIBUTED), "none");
  EXPECT_STREQ(EventModelName(static_cast<v1::EventModel>(99)), "unattributed");
}

TEST(EventNamesTest, DescribesEachKind) {
  v1::ObservedEvent lockup;
  lockup.set_kind(v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP);
  lockup.set_cpu(5);
  lockup.set_seconds(22);
  lockup.set_comm("bpftrace");
  lockup.set_pid(4242);
  EXPECT_EQ(DescribeEvent(lockup),
            "soft lockup, CPU#5 stuck 22 s, bpftrace[4242]");
  lockup.clear_cpu();
  EXPECT_EQ(DescribeEvent(lockup), "soft lockup, stuck 22 s, bpftrace[4242]");

  v1::ObservedEvent rcu;
  rcu.set_kind(v1::OBSERVED_EVENT_KIND_RCU_STALL);
  rcu.set_rcu_flavor(v1::RCU_FLAVOR_SCHED);
  rcu.set_rcu_self_detected(true);
  rcu.set_cpu(0);
  rcu.set_stall_jiffies(21000);
  rcu.set_comm("bpftrace");
  rcu.set_pid(160141);
  EXPECT_EQ(DescribeEvent(rcu),
            "RCU stall (rcu_sched, self-detected), CPU 0, t=21000 jiffies, "
            "bpftrace[160141]");

  v1::ObservedEvent hung;
  hung.set_kind(v1::OBSERVED_EVENT_KIND_HUNG_TASK);
  hung.set_seconds(120);
  hung.set_comm("jbd2/sda1-8");
  EXPECT_EQ(DescribeEvent(hung), "hung task, blocked 120 s, jbd2/sda1-8");
  EXPECT_EQ(DescribeEvent(v1::ObservedEvent()), "unspecified event");
}

}  // namespace
}  // namespace tracehealth
