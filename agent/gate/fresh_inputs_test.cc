#include "agent/gate/fresh_inputs.h"

#include <string>
#include <vector>

#include "agent/testing/test_tree.h"
#include "common/proto_time.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr char kT[] = "/sys/kernel/tracing";

// The host now: 5,000 threads (3 running), 1,250 forks, up 600.5 s; tracefs
// with no tracer.
void WriteHost(const TestTree& t) {
  t.Write("/proc/loadavg", "0.52 0.58 0.59 3/5000 4242\n");
  t.Write("/proc/stat", "cpu  1 2 3 4\nbtime 1700000000\nprocesses 1250\n");
  t.Write("/proc/uptime", "600.50 1100.00\n");
  t.Write(std::string(kT) + "/current_tracer", "nop\n");
}

// The last cycle: 4,000 threads, 1,000 forks, function_graph on and a BPF
// kprobe_multi return link; fgraph last active at that cycle.
v1::HostSnapshot LastCycle() {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.16.0");
  s.mutable_threads()->set_total(4000);
  s.mutable_threads()->set_forks_since_boot(1000);
  v1::FgraphState* fg = s.mutable_fgraph();
  fg->set_tracefs_path(kT);
  fg->set_active(true);
  fg->set_available_filter_functions(2000);
  v1::FgraphUser* u = fg->add_users();
  u->set_kind(v1::FgraphUser::KIND_FUNCTION_GRAPH_TRACER);
  u = fg->add_users();
  u->set_kind(v1::FgraphUser::KIND_BPF_KPROBE_MULTI_RETURN);
  u->set_where("pid 4242 fd 7 (tetragon)");
  *fg->mutable_last_active_at() = ToProto(absl::FromUnixSeconds(1800000000));
  fg->set_forks_at_last_active(1000);
  fg->set_null_threads_bound(0);
  fg->set_null_threads_basis("fgraph active now");
  v1::UnknownInput* x = s.add_unknown();
  x->set_input("trie");
  x->set_reason("CONFIG_PAGE_OWNER is off");
  return s;
}

std::vector<std::string> UnknownNames(const v1::HostSnapshot& s) {
  std::vector<std::string> out;
  for (const auto& u : s.unknown()) out.push_back(u.input());
  return out;
}

TEST(RefreshMovingInputsTest, ThreadsForksAndTracefsUsersAreRead) {
  TestTree t;
  WriteHost(t);
  HostFs fs(t.root());
  v1::HostSnapshot s =
      RefreshMovingInputs(fs, FeatureTable::Builtin(), LastCycle());
  EXPECT_EQ(s.threads().total(), 5000u);
  EXPECT_EQ(s.threads().running(), 3u);
  EXPECT_EQ(s.threads().forks_since_boot(), 1250u);
  EXPECT_DOUBLE_EQ(s.threads().uptime_seconds(), 600.5);
  // function_graph is gone; the BPF link (from the last scan) stays, so
  // fgraph is still active: nothing without a stack.
  ASSERT_EQ(s.fgraph().users_size(), 1);
  EXPECT_EQ(s.fgraph().users(0).kind(),
            v1::FgraphUser::KIND_BPF_KPROBE_MULTI_RETURN);
  EXPECT_TRUE(s.fgraph().active());
  EXPECT_EQ(s.fgraph().null_threads_bound(), 0u);
  // The rest is the snapshot's.
  EXPECT_EQ(s.fgraph().available_filter_functions(), 2000u);
  EXPECT_EQ(UnknownNames(s), std::vector<std::string>{"trie"});
}

TEST(RefreshMovingInputsTest, InactiveNowBoundsNullByForksSinceLastActive) {
  TestTree t;
  WriteHost(t);
  HostFs fs(t.root());
  v1::HostSnapshot last = LastCycle();
  last.mutable_fgraph()->mutable_users()->RemoveLast();  // no BPF link
  v1::HostSnapshot s = RefreshMovingInputs(fs, FeatureTable::Builtin(), last);
  EXPECT_EQ(s.fgraph().users_size(), 0);
  EXPECT_FALSE(s.fgraph().active());
  // 1,250 - 1,000 forks since fgraph was last active.
  EXPECT_EQ(s.fgraph().null_threads_bound(), 250u);
  EXPECT_EQ(s.fgraph().null_threads_basis(),
            "fork delta since fgraph last active at 2027-01-15T08:00:00+00:00");
  // The record itself is the collector's: kept as it was.
  EXPECT_EQ(s.fgraph().forks_at_last_active(), 1000u);
}

TEST(RefreshMovingInputsTest, AnUnknownLinkScanLeavesActivityUnknown) {
  TestTree t;
  WriteHost(t);
  HostFs fs(t.root());
  v1::HostSnapshot last = LastCycle();
  last.mutable_fgraph()->clear_users();
  last.mutable_fgraph()->clear_last_active_at();
  last.mutable_fgraph()->clear_forks_at_last_active();
  v1::UnknownInput* u = last.add_unknown();
  u->set_input("fgraph.kprobe_multi_links");
  u->set_reason("fdinfo scan stopped after 10 files");
  v1::HostSnapshot s = RefreshMovingInputs(fs, FeatureTable::Builtin(), last);
  EXPECT_FALSE(s.fgraph().has_active());
  EXPECT_EQ(s.fgraph().null_threads_bound(), 5000u);
  EXPECT_EQ(s.fgraph().null_threads_basis(),
            "never seen active since boot (fgraph activity partly unknown)");
  EXPECT_EQ(UnknownNames(s),
            (std::vector<std::string>{"trie", "fgraph.kprobe_multi_links",
                                      "fgraph.active"}));
}

TEST(RefreshMovingInputsTest, UnreadableFilesReplaceTheOldUnknowns) {
  TestTree t;
  t.Write("/proc/stat", "processes 1250\n");
  t.Write("/proc/uptime", "600.50 1100.00\n");
  // tracefs unreadable: current_tracer missing.
  t.Write(std::string(kT) + "/dynamic_events", "");
  HostFs fs(t.root());
  v1::HostSnapshot last = LastCycle();
  last.mutable_fgraph()->clear_users();
  v1::UnknownInput* u = last.add_unknown();
  u->set_input("threads.total");
  u->set_reason("an old reason");
  v1::HostSnapshot s = RefreshMovingInputs(fs, FeatureTable::Builtin(), last);
  EXPECT_FALSE(s.threads().has_total());
  EXPECT_FALSE(s.fgraph().has_active());
  EXPECT_FALSE(s.fgraph().has_null_threads_bound());
  EXPECT_EQ(UnknownNames(s),
            (std::vector<std::string>{"trie", "threads.total",
                                      "fgraph.current_tracer", "fgraph.active",
                                      "fgraph.null_threads_bound"}));
  EXPECT_EQ(s.unknown(1).reason(), "/proc/loadavg: No such file or directory");
}

TEST(RefreshMovingInputsTest, NoTracefs) {
  TestTree t;
  WriteHost(t);
  HostFs fs(t.root());
  v1::HostSnapshot last = LastCycle();
  last.mutable_fgraph()->clear_tracefs_path();
  last.mutable_fgraph()->clear_users();
  v1::HostSnapshot s = RefreshMovingInputs(fs, FeatureTable::Builtin(), last);
  EXPECT_FALSE(s.fgraph().has_active());
  EXPECT_EQ(s.fgraph().null_threads_bound(), 250u);
}

}  // namespace
}  // namespace tracehealth::agent
