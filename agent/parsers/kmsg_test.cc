#include "agent/parsers/kmsg.h"

#include <optional>
#include <string>
#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(KmsgRecordTest, ParsesThePrefixAndText) {
  // The example of Documentation/ABI/testing/dev-kmsg.
  auto r =
      ParseKmsgRecord("6,339,5140900,-;NET: Registered protocol family 10");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->facility, 0);  // 6 = facility 0 * 8 + level 6
  EXPECT_EQ(r->level, 6);
  EXPECT_EQ(r->seq, 339u);
  EXPECT_EQ(r->ts_usec, 5140900u);
  EXPECT_FALSE(r->continuation);
  EXPECT_EQ(r->text, "NET: Registered protocol family 10");
}

TEST(KmsgRecordTest, TakesTheFirstLineAndIgnoresTheDictionary) {
  // A record with its dictionary, as one read(2) returns it; facility 3
  // (daemon), level 6: 3 * 8 + 6 = 30.
  auto r = ParseKmsgRecord(
      "30,7,1000,c;ACPI: PCI Root Bridge [PCI0]\n SUBSYSTEM=acpi\n "
      "DEVICE=+acpi:PNP0A08:00\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->facility, 3);
  EXPECT_EQ(r->level, 6);
  EXPECT_TRUE(r->continuation);
  EXPECT_EQ(r->text, "ACPI: PCI Root Bridge [PCI0]");
}

TEST(KmsgRecordTest, AcceptsLaterPrefixFieldsAndAnEmptyText) {
  auto r = ParseKmsgRecord("4,12,34,-,caller=T1;");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->seq, 12u);
  EXPECT_EQ(r->text, "");
  // Semicolons after the first belong to the text.
  r = ParseKmsgRecord("4,13,35,-;a;b");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "a;b");
}

TEST(KmsgRecordTest, TheWidestNumbersFit) {
  // Priority 1023 = facility 127, level 7; seq and ts up to 2^64 - 1.
  auto r =
      ParseKmsgRecord("1023,18446744073709551615,18446744073709551615,-;x");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->facility, 127);
  EXPECT_EQ(r->level, 7);
  EXPECT_EQ(r->seq, 18446744073709551615u);
  const std::pair<const char*, const char*> over[] = {
      {"1024,1,1,-;x", "kmsg: the priority is not a number of 0-1023"},
      {"6,18446744073709551616,1,-;x",
       "kmsg: the sequence number is not a 64-bit decimal number"},
      {"6,1,18446744073709551616,-;x",
       "kmsg: the timestamp is not a 64-bit decimal number"},
  };
  for (const auto& [text, message] : over) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseKmsgRecord(text).status(), message);
  }
  // The lowest priority: facility 0, level 0.
  r = ParseKmsgRecord("0,1,1,-;x");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->facility, 0);
  EXPECT_EQ(r->level, 0);
  // 1022 = 127 * 8 + 6.
  r = ParseKmsgRecord("1022,1,1,-;x");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->facility, 127);
  EXPECT_EQ(r->level, 6);
}

TEST(KmsgRecordTest, ARecordCutShortIsDataLoss) {
  for (const char* cut : {"6", "6,", "6,339", "6,339,5140900",
                          "6,339,5140900,-", "6,339,5140900,-,caller=T1"}) {
    auto r = ParseKmsgRecord(cut);
    EXPECT_TRUE(absl::IsDataLoss(r.status())) << cut << ": " << r.status();
  }
}

TEST(KmsgRecordTest, MalformedRecordsAreInvalidArgument) {
  for (const char* bad : {
           "",                 // nothing
           " SUBSYSTEM=acpi",  // a dictionary line alone
           "x,1,2,-;text",     // priority not a number
           "-6,1,2,-;text",    // signed
           "6,,2,-;text",      // empty seq
           "6,1x,2,-;text",    // seq not decimal
           "6,1,0x2,-;text",   // ts not decimal
           "6,1,2,;text",      // empty flags
           "6,1,2,7;text",     // flags not letters
           "6,1,2;text",       // three fields
           "6;text",           // one field
       }) {
    auto r = ParseKmsgRecord(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status()))
        << bad << ": " << r.status();
  }
}

TEST(KmsgFrameTest, ParsesTheFramesOfABacktrace) {
  auto f = ParseKmsgFrame(" alloc_retstack_tasklist+0x5a/0x1f0");
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->reliable);
  EXPECT_EQ(f->frame, "alloc_retstack_tasklist+0x5a/0x1f0");
  EXPECT_EQ(f->symbol, "alloc_retstack_tasklist");

  f = ParseKmsgFrame(" ? kasan_release_vmalloc+0xa7/0xc0");
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->reliable);
  EXPECT_EQ(f->symbol, "kasan_release_vmalloc");

  f = ParseKmsgFrame(" ext4_map_blocks+0x1d4/0x6c0 [ext4]");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->frame, "ext4_map_blocks+0x1d4/0x6c0 [ext4]");
  EXPECT_EQ(f->symbol, "ext4_map_blocks");

  // A compiler clone is its function.
  f = ParseKmsgFrame(" __purge_vmap_area_lazy.constprop.0+0x5b8/0xa10");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->symbol, "__purge_vmap_area_lazy");

  // Older kernels print the address first; arm64 indents with two spaces;
  // an escaped tab is indentation too.
  f = ParseKmsgFrame(
      " [<ffffffff8110a0b2>] ? register_ftrace_graph+0x3d7/0x6c0");
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->reliable);
  EXPECT_EQ(f->symbol, "register_ftrace_graph");
  f = ParseKmsgFrame("  el0_svc+0x34/0x50");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->symbol, "el0_svc");
  f = ParseKmsgFrame("\\x09worker_thread+0x844/0x10e0");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->symbol, "worker_thread");
}

TEST(KmsgFrameTest, OtherLinesAreNotFrames) {
  for (const char* not_frame : {
           "alloc_retstack_tasklist+0x5a/0x1f0",  // not indented
           " Call Trace:",
           " <TASK>",
           " alloc_retstack_tasklist",           // no offset
           " alloc_retstack_tasklist+0x5a",      // no size
           " alloc_retstack_tasklist+0x/0x1f0",  // empty offset
           " alloc_retstack_tasklist+0x5a/0x",   // empty size
           " foo+0x1/0x2 [mod",                  // unclosed module
           " foo+0x1/0x2 trailing",              // junk after the size
           " +0x1/0x2",                          // no symbol
           " .cold+0x1/0x2",                     // a suffix alone
           " [<xyz>] foo+0x1/0x2",               // address not hex
           "RIP: 0010:smp_call_function_many_cond+0x1d8/0xbb0",
       }) {
    EXPECT_FALSE(ParseKmsgFrame(not_frame).has_value()) << not_frame;
  }
}

TEST(KmsgFrameTest, TheKernelInstructionPointerOfARegisterDump) {
  std::optional<KmsgFrame> f =
      ParseKmsgRipFrame("RIP: 0010:register_ftrace_graph+0x134/0x300");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->symbol, "register_ftrace_graph");
  EXPECT_EQ(f->frame, "register_ftrace_graph+0x134/0x300");
  EXPECT_TRUE(f->reliable);
  f = ParseKmsgRipFrame("RIP: 0010:__purge_vmap_area_lazy.cold+0x5/0x9 [mod]");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->symbol, "__purge_vmap_area_lazy");
  for (const char* not_rip : {
           "RIP: 0033:0x43c4d0",            // user mode: an address
           "RIP: 0033:foo+0x1/0x2",         // user code segment
           "RIP: 0010:",                    // nothing after the segment
           "RIP: 0010:0xffffffff81000000",  // no symbol
           "RIP: 0010:foo",                 // no offset
           "RIP: 0010:? foo+0x1/0x2",       // a guess is no IP
           " RIP: 0010:foo+0x1/0x2",        // indented
           "RSP: 0018:ffffc928e05b3bd8 EFLAGS: 00000286",
           " graph_trace_init+0x43/0x50",  // a frame, not a dump
       }) {
    EXPECT_FALSE(ParseKmsgRipFrame(not_rip).has_value()) << not_rip;
  }
}

TEST(KmsgFrameTest, StackMarkers) {
  for (const char* m : {" <IRQ>", " </IRQ>", " <TASK>", " </TASK>", " <NMI>",
                        " </NMI>", "  <SOFTIRQ>", " </SOFTIRQ>", " <EOI>"}) {
    EXPECT_TRUE(IsKmsgStackMarker(m)) << m;
  }
  for (const char* m : {"<TASK>", " <TASK> ", " TASK", " Call Trace:"}) {
    EXPECT_FALSE(IsKmsgStackMarker(m)) << m;
  }
}

}  // namespace
}  // namespace tracehealth::agent
