#include "agent/report/report_text.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(RenderReportTextTest, ShowsStateTableAndUnknowns) {
  v1::HostReport r;
  r.set_host_id("web-7");
  r.set_agent_version("0.1.0");
  r.set_model_version("1.0.0");
  v1::HostSnapshot* s = r.mutable_snapshot();
  s->mutable_kernel()->set_release("6.16.12");
  s->mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  s->mutable_kernel()->set_preempt_source("debugfs sched/preempt");
  s->mutable_threads()->set_total(240000);
  s->mutable_fgraph()->set_active(true);
  v1::FgraphUser* u = s->mutable_fgraph()->add_users();
  u->set_kind(v1::FgraphUser::KIND_FUNCTION_GRAPH_TRACER);
  u->set_where("foo");
  v1::UnknownInput* unknown = s->add_unknown();
  unknown->set_input("stackdepot.pools");
  unknown->set_reason("debugfs not mounted");
  v1::NotApplicableInput* na = s->add_not_applicable();
  na->set_input("trie");
  na->set_reason("CONFIG_PAGE_OWNER is off: no page_owner stacks");
  v1::AttachPrediction* a = r.mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_uses_fgraph(true);
  a->set_fgraph_already_active(true);
  a->set_latency_seconds(0.0001);
  a->set_risk(v1::RISK_NONE);
  a->set_summary("kprobe_multi return: fgraph already active.");
  r.mutable_predictions()->set_worst_risk(v1::RISK_NONE);

  std::string text = RenderReportText(r);
  for (const char* want :
       {"host web-7", "Kernel      6.16.12", "none (non-preemptible)",
        "[from debugfs sched/preempt]", "Threads     240000", "ACTIVE",
        "user: function_graph tracer (foo)", "BPF kprobe_multi (return)",
        "active", "100 us", "kprobe_multi return: fgraph already active.",
        "Stack depot not readable", "Unknown inputs (1)",
        "stackdepot.pools: debugfs not mounted",
        "Not applicable on this kernel (1)",
        "trie: CONFIG_PAGE_OWNER is off: no page_owner stacks",
        "Worst risk  none"}) {
    EXPECT_TRUE(absl::StrContains(text, want)) << want << "\n" << text;
  }
  EXPECT_FALSE(absl::StrContains(text, "Threads     unknown"));
}

TEST(RenderReportTextTest, ReadsTotalsAndTheCostliestInputs) {
  v1::HostReport r;
  v1::AgentHealth* h = r.mutable_health();
  for (int i = 0; i < 10; ++i) {
    v1::InputCost* c = h->add_input_costs();
    c->set_input(absl::StrCat("/proc/f", i));
    c->set_opens(1);
    c->set_read_calls(2);
    c->set_bytes_read(i == 0 ? 3 << 20 : 100);
    c->set_syscalls(4);
  }
  std::string text = RenderReportText(r);
  // 10 inputs: 10 opens, 20 reads, 3 MiB + 9 * 100 B = 3,146,628 B
  // = 3.0 MiB, 40 syscalls.
  EXPECT_TRUE(absl::StrContains(text,
                                "Reads       10 inputs, 10 opens, 20 read "
                                "calls, 3.0 MiB, 40 syscalls"))
      << text;
  EXPECT_TRUE(absl::StrContains(text, "/proc/f0")) << text;
  EXPECT_TRUE(absl::StrContains(text, "/proc/f7")) << text;
  // Eight rows by name, the rest counted.
  EXPECT_FALSE(absl::StrContains(text, "/proc/f8")) << text;
  EXPECT_TRUE(absl::StrContains(text, "... 2 more inputs")) << text;
}

TEST(RenderReportTextTest, UnknownsAreSaidNotZero) {
  v1::HostReport r;
  std::string text = RenderReportText(r);
  EXPECT_TRUE(absl::StrContains(text, "release unknown")) << text;
  EXPECT_TRUE(absl::StrContains(text, "Threads     unknown")) << text;
  EXPECT_TRUE(absl::StrContains(text, "activity unknown")) << text;
  EXPECT_TRUE(absl::StrContains(text, "watchdog_thresh unknown")) << text;
}

// Text a host controls cannot add a line, move the cursor, clear the screen
// or ring the bell: every control character comes out escaped.
TEST(RenderReportTextTest, EscapesControlCharactersFromTheHost) {
  const std::string evil = "x\nWorst risk  none\x1b[2J\x07\r\xc2\x9b\xff";
  const std::string shown = "x\\nWorst risk  none\\x1b[2J\\x07\\r\\u009b\\xff";
  v1::HostReport clean;
  clean.set_host_id("h");
  v1::HostSnapshot* s = clean.mutable_snapshot();
  s->mutable_kernel()->set_release("r");
  s->mutable_kernel()->set_arch("a");
  s->mutable_kernel()->set_preempt_source("p");
  s->mutable_kernel()->set_config_kasan(true);
  s->mutable_kernel()->set_config_source("c");
  s->mutable_cpus()->set_online(4);
  s->mutable_cpus()->set_model_name("m");
  s->mutable_fgraph()->set_tracefs_path("t");
  s->mutable_fgraph()->add_users()->set_where("w");
  s->mutable_fgraph()->set_null_threads_bound(1);
  s->mutable_fgraph()->set_null_threads_basis("b");
  s->add_unknown()->set_input("i");
  s->mutable_unknown(0)->set_reason("why");
  v1::AttachPrediction* a = clean.mutable_predictions()->add_attach();
  a->set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  a->set_summary("sum");
  clean.mutable_predictions()->mutable_stack_depot()->set_summary("sd");
  clean.mutable_predictions()->mutable_vmap_purge()->set_summary("vp");

  v1::HostReport bad = clean;
  bad.set_host_id(evil);
  bad.set_agent_version(evil);
  bad.set_model_version(evil);
  s = bad.mutable_snapshot();
  s->mutable_kernel()->set_release(evil);
  s->mutable_kernel()->set_arch(evil);
  s->mutable_kernel()->set_preempt_source(evil);
  s->mutable_kernel()->set_config_source(evil);
  s->mutable_cpus()->set_model_name(evil);
  s->mutable_fgraph()->set_tracefs_path(evil);
  s->mutable_fgraph()->mutable_users(0)->set_where(evil);
  s->mutable_fgraph()->set_null_threads_basis(evil);
  s->mutable_unknown(0)->set_input(evil);
  s->mutable_unknown(0)->set_reason(evil);
  bad.mutable_predictions()->mutable_attach(0)->set_summary(evil);
  bad.mutable_predictions()->mutable_stack_depot()->set_summary(evil);
  bad.mutable_predictions()->mutable_vmap_purge()->set_summary(evil);

  const std::string text = RenderReportText(bad);
  const std::string plain = RenderReportText(clean);
  auto lines = [](const std::string& t) {
    return std::count(t.begin(), t.end(), '\n');
  };
  EXPECT_EQ(lines(text), lines(plain)) << text;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    ASSERT_TRUE(u == '\n' || (u >= 0x20 && u != 0x7f)) << int{u} << "\n"
                                                       << text;
  }
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos);
  EXPECT_EQ(text.find("\xff"), std::string::npos);
  // The 16 fields above, each shown once, escaped.
  size_t shown_times = 0;
  for (size_t at = text.find(shown); at != std::string::npos;
       at = text.find(shown, at + 1)) {
    ++shown_times;
  }
  EXPECT_EQ(shown_times, 16u) << text;
}

}  // namespace
}  // namespace tracehealth::agent
