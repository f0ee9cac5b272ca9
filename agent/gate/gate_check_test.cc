#include "agent/gate/gate_check.h"

#include <string>

#include "agent/gate/function_list.h"
#include "agent/testing/test_tree.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr char kT[] = "/sys/kernel/tracing";

v1::CheckRequest Request(v1::ProbeKind kind, int64_t seconds, int32_t nanos) {
  v1::CheckRequest r;
  r.set_probe_kind(kind);
  r.mutable_max_latency()->set_seconds(seconds);
  r.mutable_max_latency()->set_nanos(nanos);
  return r;
}

std::string Invalid(const v1::CheckRequest& r) {
  absl::Status s = ValidateCheckRequest(r);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  return std::string(s.message());
}

TEST(ValidateCheckRequestTest, NamesTheField) {
  v1::CheckRequest ok = Request(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2, 0);
  EXPECT_TRUE(ValidateCheckRequest(ok).ok());

  v1::CheckRequest r = ok;
  r.set_probe_kind(v1::PROBE_KIND_UNSPECIFIED);
  EXPECT_EQ(
      Invalid(r).rfind("probe_kind: required, one of function_graph, ", 0), 0u)
      << Invalid(r);
  r.set_probe_kind(static_cast<v1::ProbeKind>(77));
  EXPECT_NE(Invalid(r).find("(got 77)"), std::string::npos);

  r = ok;
  r.set_functions(0);
  EXPECT_EQ(Invalid(r), "functions: must be at least 1");
  r.set_functions(1);
  EXPECT_TRUE(ValidateCheckRequest(r).ok());

  r = ok;
  r.set_filter("!vfs_read");
  EXPECT_EQ(Invalid(r).rfind("filter: only '!' patterns", 0), 0u);
  r.set_filter("");
  EXPECT_EQ(Invalid(r), "filter: empty filter");

  r = ok;
  r.clear_max_latency();
  EXPECT_EQ(Invalid(r), "max_latency: required");
  r = Request(v1::PROBE_KIND_KRETPROBE, 0, 0);
  EXPECT_EQ(Invalid(r),
            "max_latency: must be positive (seconds >= 0, nanos 0..999999999)");
  r = Request(v1::PROBE_KIND_KRETPROBE, -1, 0);
  EXPECT_EQ(Invalid(r).rfind("max_latency: must be positive", 0), 0u);
  r = Request(v1::PROBE_KIND_KRETPROBE, 0, 1000000000);
  EXPECT_EQ(Invalid(r).rfind("max_latency: must be positive", 0), 0u);
  // One nanosecond is a budget; 3600 s is the longest, 3600 s + 1 ns is not.
  EXPECT_TRUE(
      ValidateCheckRequest(Request(v1::PROBE_KIND_KRETPROBE, 0, 1)).ok());
  EXPECT_TRUE(
      ValidateCheckRequest(Request(v1::PROBE_KIND_KRETPROBE, 3600, 0)).ok());
  EXPECT_EQ(Invalid(Request(v1::PROBE_KIND_KRETPROBE, 3600, 1)),
            "max_latency: at most 3600 s");
}

// 6.16 PREEMPT_NONE, 240,000 threads without a stack, tracefs with 5
// traceable functions.
class EvaluateCheckTest : public ::testing::Test {
 protected:
  EvaluateCheckTest() : fs_(tree_.root()), functions_(&fs_) {
    tree_.Write(std::string(kT) + "/available_filter_functions",
                "vfs_read\nvfs_write\nvfs_open\ndo_sys_open\nksys_read\n");
    s_.mutable_kernel()->set_release("6.16.0");
    s_.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
    s_.mutable_threads()->set_total(240000);
    s_.mutable_fgraph()->set_tracefs_path(kT);
    s_.mutable_fgraph()->set_active(false);
    s_.mutable_fgraph()->set_available_filter_functions(5);
    v1::UnknownInput* u = s_.add_unknown();
    u->set_input("trie");
    u->set_reason("CONFIG_PAGE_OWNER is off");
  }
  v1::CheckResponse Check(const v1::CheckRequest& r) {
    return EvaluateCheck(r, s_, ModelOptions(), functions_, std::nullopt);
  }

  TestTree tree_;
  HostFs fs_;
  FunctionCache functions_;
  v1::HostSnapshot s_;
};

TEST_F(EvaluateCheckTest, FilterCountedInAvailableFilterFunctions) {
  v1::CheckRequest r = Request(v1::PROBE_KIND_KPROBE_MULTI_RETURN, 2, 0);
  r.set_filter("vfs_*");
  v1::CheckResponse out = Check(r);
  EXPECT_EQ(out.sites(), 3u);
  EXPECT_EQ(out.sites_source(), "filter 'vfs_*': 3 of 5 functions");
  EXPECT_EQ(out.prediction().patch_sites(), 3u);
  EXPECT_EQ(out.verdict(), v1::ATTACH_VERDICT_STALL_RISK);
  EXPECT_EQ(out.max_latency_seconds(), 2);
  // 7,500 passes: 79.8611 s of walk + 3 us of patching.
  EXPECT_EQ(out.reason(),
            "unsafe: kprobe_multi_return attach walks 240000 threads: 79.86 s "
            "> 2.00 s budget; soft lockup (PREEMPT_NONE, 3.99x the 20.00 s "
            "threshold)");
  EXPECT_GT(out.mitigations_size(), 0);
  // Explained, for --json and people.
  EXPECT_FALSE(out.prediction().summary().empty());
  EXPECT_GT(out.prediction().basis().inputs_size(), 0);
  ASSERT_EQ(out.unknown_size(), 1);
  EXPECT_EQ(out.unknown(0).input(), "trie");
}

TEST_F(EvaluateCheckTest, FunctionsAndDefaults) {
  v1::CheckRequest r = Request(v1::PROBE_KIND_FENTRY_FEXIT, 2, 0);
  r.set_functions(40);
  v1::CheckResponse out = Check(r);
  EXPECT_EQ(out.sites(), 40u);
  EXPECT_EQ(out.sites_source(), "functions");
  EXPECT_EQ(out.verdict(), v1::ATTACH_VERDICT_SAFE);
  // No walk; a BPF trampoline update per probe: 40 * 17 s / 2800 =
  // 242.9 ms (bpftrace PR #3053), within 2 s.
  EXPECT_EQ(out.reason(),
            "safe: fentry attach does not use fgraph on this kernel: 242.9 ms "
            "<= 2.00 s budget");
  EXPECT_EQ(out.mitigations_size(), 0);
  // No sites given: function_graph patches every traceable function (5).
  out = Check(Request(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2, 0));
  EXPECT_EQ(out.sites(), 5u);
  EXPECT_EQ(out.sites_source(), "default");
}

TEST_F(EvaluateCheckTest, AFilterThatCannotBeCountedIsUnknown) {
  v1::CheckRequest r = Request(v1::PROBE_KIND_FENTRY_FEXIT, 2, 0);
  r.set_filter("nothing_*");
  v1::CheckResponse out = Check(r);
  EXPECT_EQ(out.verdict(), v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_EQ(out.reason(),
            "unknown: fentry: filter 'nothing_*' selects none of the 5 "
            "functions in available_filter_functions");
  // Mitigations still come with an unknown answer (none apply here: fentry
  // does not walk).
  s_.mutable_fgraph()->clear_tracefs_path();
  r.set_filter("vfs_*");
  out = Check(r);
  EXPECT_EQ(out.verdict(), v1::ATTACH_VERDICT_UNKNOWN);
  EXPECT_EQ(out.reason(),
            "unknown: fentry: filter 'vfs_*' cannot be counted: tracefs is "
            "not mounted");
  EXPECT_EQ(out.sites_source(), "filter 'vfs_*'");
}

TEST_F(EvaluateCheckTest, TheTrendReachesTheTimingMitigation) {
  v1::ThreadTrend trend;
  trend.set_threads_per_second(-100);
  trend.set_window_seconds(600);
  trend.set_samples(40);
  v1::CheckRequest r = Request(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, 2, 0);
  r.set_functions(2000);
  v1::CheckResponse out =
      EvaluateCheck(r, s_, ModelOptions(), functions_, trend);
  ASSERT_TRUE(out.has_trend());
  bool timing = false;
  for (const auto& m : out.mitigations()) {
    if (m.kind() != v1::Mitigation::KIND_TIMING) continue;
    timing = true;
    // (240000 - 37920) / 100 s (common/models/mitigation's test works out
    // 37,920 threads).
    EXPECT_NEAR(m.wait_seconds(), 2020.8, 1e-9);
  }
  EXPECT_TRUE(timing);
}

}  // namespace
}  // namespace tracehealth::agent
