#include "agent/parsers/tracefs.h"

#include <string>
#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(CurrentTracerTest, Parses) {
  EXPECT_EQ(*ParseCurrentTracer("function_graph\n"), "function_graph");
  EXPECT_EQ(*ParseCurrentTracer("  nop \n"), "nop");  // trimmed
  ExpectRefused(ParseCurrentTracer("\n").status(), "current_tracer: empty");
  ExpectRefused(ParseCurrentTracer("nop function\n").status(),
                "current_tracer: 'nop function' is not one tracer name");
}

TEST(FlagFileTest, Parses) {
  EXPECT_EQ(*ParseFlagFile("1\n"), true);
  EXPECT_EQ(*ParseFlagFile(" 0 \n"), false);  // trimmed
  ExpectRefused(ParseFlagFile("2\n").status(), "flag file: '2' is not 0 or 1");
  ExpectRefused(ParseFlagFile("").status(), "flag file: '' is not 0 or 1");
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
  const std::pair<const char*, const char*> cases[] = {
      {"garbage line\n", "dynamic_events: malformed line 'garbage line'"},
      {":fprobes/x y\n", "dynamic_events: malformed line ':fprobes/x y'"},
      {"f x:y\n", "dynamic_events: malformed line 'f x:y'"},
      {"fx:fprobes/a b\n",
       "dynamic_events: malformed type in 'fx:fprobes/a b'"},
      {"f: target\n", "dynamic_events: no event name in 'f: target'"},
      // The line number does not matter: the first bad line is named.
      {"p:kprobes/a a\n1:b c\n", "dynamic_events: malformed line '1:b c'"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseDynamicEvents(text).status(), message);
  }
}

// Lines holding only blanks are no functions (available_filter_functions and
// enabled_functions counts).
TEST(FunctionLineTest, BlankLinesDoNotCount) {
  EXPECT_TRUE(IsFunctionLine("a (1)"));
  EXPECT_TRUE(IsFunctionLine(" b"));
  EXPECT_FALSE(IsFunctionLine(""));
  EXPECT_FALSE(IsFunctionLine(" "));
  EXPECT_FALSE(IsFunctionLine("\t \r"));
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
