#include "agent/collect/tracefs_users.h"

#include <sys/stat.h>

#include <string>
#include <vector>

#include "agent/testing/test_tree.h"
#include "common/kernel/feature_table.h"
#include "common/kernel/release.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr char kT[] = "/sys/kernel/tracing";

FprobeFgraphRule RuleFor(const char* release, const char* arch = "") {
  return FprobeFgraphRuleFor(FeatureTable::Builtin(),
                             *ParseKernelRelease(release), arch);
}

std::vector<std::string> Users(const v1::FgraphState& fg) {
  std::vector<std::string> out;
  for (const v1::FgraphUser& u : fg.users()) {
    out.push_back(v1::FgraphUser::Kind_Name(u.kind()) + " " + u.where());
  }
  return out;
}

TEST(FprobeFgraphRuleTest, ByRelease) {
  // 6.13: fprobe on rethook, no fprobe user registers fgraph.
  FprobeFgraphRule r = RuleFor("6.13.2");
  EXPECT_FALSE(r.Registers(true));
  EXPECT_FALSE(r.Registers(false));
  // 6.16: on fgraph, entry-only ones too.
  r = RuleFor("6.16.0");
  EXPECT_TRUE(r.Registers(true));
  EXPECT_TRUE(r.Registers(false));
  EXPECT_TRUE(r.Registers(std::nullopt));
  // 6.19, and 6.18.32 (the backport, d83e51202fec), but not 6.18.31:
  // entry-only leave it; an unknown exit handler still counts.
  for (const char* rel : {"6.19.0", "6.18.32"}) {
    r = RuleFor(rel, "x86_64");
    EXPECT_TRUE(r.Registers(true)) << rel;
    EXPECT_FALSE(r.Registers(false)) << rel;
    EXPECT_TRUE(r.Registers(std::nullopt)) << rel;
  }
  EXPECT_TRUE(RuleFor("6.18.31", "x86_64").Registers(false));
  // The architecture unknown: the general releases (6.18.32).
  EXPECT_FALSE(RuleFor("6.18.32").Registers(false));
  // arm64 needs cd06078a38aa too: from 6.18.34 (kernel and uname names).
  EXPECT_TRUE(RuleFor("6.18.33", "aarch64").Registers(false));
  EXPECT_TRUE(RuleFor("6.18.33", "arm64").Registers(false));
  EXPECT_FALSE(RuleFor("6.18.34", "aarch64").Registers(false));
  // Unknown release: the worst case.
  r = FprobeFgraphRuleFor(FeatureTable::Builtin(), std::nullopt, "");
  EXPECT_TRUE(r.Registers(false));
}

TEST(ReadTracefsUsersTest, TracersInstancesProfilerAndEvents) {
  TestTree t;
  const std::string d = kT;
  t.Write(d + "/current_tracer", "irqsoff\n");
  t.Write(d + "/options/display-graph", "1\n");
  t.Write(d + "/instances/b/current_tracer", "function_graph\n");
  t.Write(d + "/instances/a/current_tracer", "wakeup\n");
  t.Write(d + "/instances/a/options/display-graph", "0\n");
  t.Write(d + "/function_profile_enabled", "1\n");
  t.Write(d + "/dynamic_events",
          "f:fprobes/entry vfs_read\n"
          "f:fprobes/exit vfs_read%return ret=$retval\n"
          "p:kprobes/k vfs_write\n");
  HostFs fs(t.root());
  v1::FgraphState fg;
  UnknownInputs unknown;
  EXPECT_TRUE(ReadTracefsUsers(fs, d, RuleFor("6.19.1"), &fg, &unknown));
  EXPECT_EQ(unknown.size(), 0);
  // Instance "a" runs wakeup without display-graph: not a user. On 6.19 the
  // entry-only fprobe event does not register fgraph, the %return one does.
  EXPECT_EQ(Users(fg), (std::vector<std::string>{
                           "KIND_GRAPH_LATENCY_TRACER irqsoff",
                           "KIND_FUNCTION_GRAPH_TRACER b",
                           "KIND_FUNCTION_PROFILER ",
                           "KIND_FPROBE_RETURN_EVENT fprobes/exit",
                       }));
  // On 6.16 both fprobe events do.
  v1::FgraphState fg16;
  EXPECT_TRUE(ReadTracefsUsers(fs, d, RuleFor("6.16.0"), &fg16, &unknown));
  EXPECT_EQ(fg16.users_size(), 5);
}

TEST(ReadTracefsUsersTest, OptionalFilesAbsentAreKnown) {
  TestTree t;
  t.Write(std::string(kT) + "/current_tracer", "nop\n");
  HostFs fs(t.root());
  v1::FgraphState fg;
  UnknownInputs unknown;
  EXPECT_TRUE(ReadTracefsUsers(fs, kT, RuleFor("6.16.0"), &fg, &unknown));
  EXPECT_EQ(fg.users_size(), 0);
  EXPECT_EQ(unknown.size(), 0);
}

TEST(ReadTracefsUsersTest, UnreadableSourcesAreNamed) {
  TestTree t;
  const std::string d = kT;
  // No top-level current_tracer; an instance whose tracer does not parse;
  // a profiler flag that is not 0/1; dynamic_events as a directory.
  t.Write(d + "/instances/x/current_tracer", "");
  t.Write(d + "/function_profile_enabled", "maybe\n");
  t.Write(d + "/dynamic_events/x", "");
  HostFs fs(t.root());
  v1::FgraphState fg;
  UnknownInputs unknown;
  EXPECT_FALSE(ReadTracefsUsers(fs, d, RuleFor("6.16.0"), &fg, &unknown));
  std::vector<std::string> names;
  for (const auto& u : unknown) names.push_back(u.input());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "fgraph.current_tracer",
                       "fgraph.instances.x.current_tracer",
                       "fgraph.function_profile_enabled",
                       "fgraph.dynamic_events",
                   }));
}

// Active with any user; inactive only when every source was read; else
// unknown, with the reason.
TEST(SetActiveFromUsersTest, ActiveInactiveOrUnknown) {
  v1::FgraphState fg;
  UnknownInputs unknown;
  SetActiveFromUsers(true, &fg, &unknown);
  ASSERT_TRUE(fg.has_active());
  EXPECT_FALSE(fg.active());
  EXPECT_EQ(unknown.size(), 0);

  SetActiveFromUsers(false, &fg, &unknown);
  EXPECT_FALSE(fg.has_active());
  ASSERT_EQ(unknown.size(), 1);
  EXPECT_EQ(unknown[0].input(), "fgraph.active");
  EXPECT_EQ(unknown[0].reason(),
            "no fgraph user seen, but not every source could be read");

  // A user seen is enough, whatever could not be read.
  fg.add_users()->set_kind(v1::FgraphUser::KIND_FUNCTION_PROFILER);
  UnknownInputs none;
  SetActiveFromUsers(false, &fg, &none);
  ASSERT_TRUE(fg.has_active());
  EXPECT_TRUE(fg.active());
  EXPECT_EQ(none.size(), 0);
}

}  // namespace
}  // namespace tracehealth::agent
