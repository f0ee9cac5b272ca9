#include "agent/parsers/tracefs.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(CurrentTracerTest, Parses) {
  EXPECT_EQ(*ParseCurrentTracer("function_graph\n"), "function_graph");
  EXPECT_EQ(*ParseCurrentTracer("nop\n"), "nop");
  EXPECT_FALSE(ParseCurrentTracer("\n").ok());
  EXPECT_FALSE(ParseCurrentTracer("nop function\n").ok());
}

TEST(FlagFileTest, Parses) {
  EXPECT_EQ(*ParseFlagFile("1\n"), true);
  EXPECT_EQ(*ParseFlagFile("0\n"), false);
  EXPECT_FALSE(ParseFlagFile("2\n").ok());
  EXPECT_FALSE(ParseFlagFile("").ok());
}

TEST(TracerUsesFgraphTest, Kinds) {
  EXPECT_TRUE(TracerUsesFgraph("function_graph", false));
  EXPECT_FALSE(TracerUsesFgraph("function", true));
  EXPECT_FALSE(TracerUsesFgraph("irqsoff", false));
  EXPECT_TRUE(TracerUsesFgraph("irqsoff", true));
  EXPECT_TRUE(TracerUsesFgraph("wakeup_dl", true));
  EXPECT_FALSE(TracerUsesFgraph("nop", true));
}

TEST(DynamicEventsTest, ParsesFprobesAndOthers) {
  auto r = ParseDynamicEvents(
      "f:fprobes/vfs_read_entry vfs_read\n"
      "f:fprobes/vfs_read_exit vfs_read%return ret=$retval\n"
      "p:kprobes/p_do_sys_open do_sys_open\n"
      "r10:kprobes/r_do_sys_open do_sys_open\n"
      "t:tracepoints/sched_switch sched_switch\n");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].type, 'f');
  EXPECT_EQ((*r)[0].name, "fprobes/vfs_read_entry");
  EXPECT_FALSE((*r)[0].is_return);
  EXPECT_TRUE((*r)[1].is_return);
  EXPECT_EQ((*r)[1].target, "vfs_read%return");
  EXPECT_EQ((*r)[2].type, 'p');
  EXPECT_TRUE((*r)[3].is_return);
  EXPECT_EQ((*r)[4].type, 't');
  EXPECT_TRUE(ParseDynamicEvents("")->empty());
}

TEST(DynamicEventsTest, RejectsMalformed) {
  for (const char* bad : {"garbage line\n", ":fprobes/x y\n", "f x:y\n",
                          "fx:fprobes/a b\n", "f: target\n"}) {
    EXPECT_FALSE(ParseDynamicEvents(bad).ok()) << bad;
  }
}

TEST(CountLinesTest, CountsNonEmpty) {
  EXPECT_EQ(CountNonEmptyLines(""), 0u);
  EXPECT_EQ(CountNonEmptyLines("a (1)\nb (1)\n\n"), 2u);
  EXPECT_EQ(CountNonEmptyLines("a (1)\nb (1)"), 2u);
}

TEST(TracefsTest, FtraceFilterEntries) {
  // kernel/trace/ftrace.c: an empty filter prints
  // "#### all functions enabled ####"; function commands print as
  // "func:command[:count]".
  EXPECT_FALSE(IsFtraceFilterEntry("#### all functions enabled ####"));
  EXPECT_TRUE(IsFtraceFilterEntry("vfs_read"));
  EXPECT_TRUE(IsFtraceFilterEntry("ext4_file_write_iter [ext4]\n"));
  EXPECT_FALSE(IsFtraceFilterEntry("schedule:traceon:unlimited"));
  EXPECT_FALSE(IsFtraceFilterEntry("   "));
}

}  // namespace
}  // namespace tracehealth::agent
