#include "server/query/what_if.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "common/models/evaluate.h"
#include "common/models/explain.h"
#include "common/models/kernel_features.h"
#include "gtest/gtest.h"
#include "server/query/single_what_ifs.h"

namespace tracehealth::server {
namespace {

v1::HostSnapshot Stored() {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.16.3");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  s.mutable_threads()->set_total(1000);
  s.mutable_fgraph()->set_active(true);
  s.mutable_fgraph()->add_users()->set_kind(
      v1::FgraphUser::KIND_FUNCTION_PROFILER);
  s.mutable_fgraph()->set_null_threads_bound(10);
  s.mutable_fgraph()->set_null_threads_basis("fork delta");
  return s;
}

TEST(WhatIfTest, NoOverridesChangeNothing) {
  v1::WhatIf w;
  EXPECT_FALSE(HasOverrides(w));
  v1::HostSnapshot s = Stored();
  ModelOptions o;
  ApplyWhatIf(w, s, o);
  EXPECT_EQ(s.SerializeAsString(), Stored().SerializeAsString());
  EXPECT_FALSE(o.batch.has_value());
}

TEST(WhatIfTest, ThreadsDropTheStoredNullBound) {
  v1::WhatIf w;
  w.set_threads(400000);
  EXPECT_TRUE(HasOverrides(w));
  v1::HostSnapshot s = Stored();
  ModelOptions o;
  ApplyWhatIf(w, s, o);
  EXPECT_EQ(s.threads().total(), 400000u);
  EXPECT_FALSE(s.fgraph().has_null_threads_bound());
}

TEST(WhatIfTest, EveryOverrideLands) {
  v1::WhatIf w;
  w.set_threads(5000);
  w.set_null_threads(700);
  w.set_batch(1024);
  w.set_preempt_mode(v1::PREEMPT_MODE_FULL);
  w.set_kernel_release("6.19.1");
  w.set_c_visit_seconds(80e-9);
  w.set_latency_budget_seconds(0.5);
  w.set_fgraph_active(false);
  ASSERT_TRUE(CheckWhatIf(w).ok());
  v1::HostSnapshot s = Stored();
  ModelOptions o;
  ApplyWhatIf(w, s, o);
  EXPECT_EQ(s.threads().total(), 5000u);
  EXPECT_EQ(s.fgraph().null_threads_bound(), 700u);
  EXPECT_EQ(s.kernel().preempt_mode(), v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(s.kernel().release(), "6.19.1");
  EXPECT_FALSE(s.fgraph().active());
  EXPECT_EQ(s.fgraph().users_size(), 0);
  EXPECT_EQ(*o.batch, 1024u);
  EXPECT_DOUBLE_EQ(*o.c_visit_seconds, 80e-9);
  EXPECT_DOUBLE_EQ(*o.latency_budget_seconds, 0.5);
}

// The basis inputs of the function_graph attach prediction for `s` under
// `w`, by name: their sources.
std::map<std::string, v1::InputSource> Sources(const v1::WhatIf& w,
                                               v1::HostSnapshot s) {
  ModelOptions o;
  ApplyWhatIf(w, s, o);
  v1::AttachPrediction p =
      PredictAttach(s, v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, o);
  ExplainAttach(s, o, &p);
  std::map<std::string, v1::InputSource> out;
  for (const v1::BasisInput& in : p.basis().inputs())
    out[in.name()] = in.source();
  return out;
}

// A host whose fgraph was never active: the attach walks every thread, and
// the basis lists each input the walk depends on.
v1::HostSnapshot Walking() {
  v1::HostSnapshot s = Stored();
  s.mutable_fgraph()->set_active(false);
  s.mutable_fgraph()->clear_users();
  s.mutable_thresholds()->set_watchdog_thresh_seconds(10);
  s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(21);
  return s;
}

TEST(WhatIfTest, EveryOverriddenInputIsListedAsOverridden) {
  using S = v1::InputSource;
  const S kMeasured = v1::INPUT_SOURCE_MEASURED;
  const S kOverridden = v1::INPUT_SOURCE_OVERRIDDEN;
  // Without a what-if: the host's values.
  std::map<std::string, S> stored = Sources(v1::WhatIf(), Walking());
  EXPECT_EQ(stored["kernel.release"], kMeasured);
  EXPECT_EQ(stored["kernel.preempt_mode"], kMeasured);
  EXPECT_EQ(stored["threads.total"], kMeasured);
  EXPECT_EQ(stored["fgraph.active"], kMeasured);
  EXPECT_EQ(stored["fgraph.null_threads_bound"], v1::INPUT_SOURCE_DERIVED);
  EXPECT_EQ(stored["batch"], v1::INPUT_SOURCE_DERIVED);

  // Each override alone: that input, and only it, is OVERRIDDEN.
  for (const SingleWhatIf& one : kSingleWhatIfs) {
    SCOPED_TRACE(one.input);
    v1::WhatIf w;
    one.set(w);
    std::map<std::string, S> got = Sources(w, Walking());
    EXPECT_EQ(got[one.input], kOverridden);
    for (const auto& [name, source] : got) {
      if (name != one.input && name != "fgraph.null_threads_bound") {
        EXPECT_NE(source, kOverridden) << name;
      }
    }
  }
  // fgraph_active=true on a host where it was false: no walk, and the one
  // input that says why is overridden.
  v1::WhatIf active;
  active.set_fgraph_active(true);
  EXPECT_EQ(Sources(active, Walking())["fgraph.active"], kOverridden);
}

// A Debian host as the agent reports it: the ABI release, the version
// string naming the Debian package and the upstream version read from it.
v1::HostSnapshot Debian() {
  v1::HostSnapshot s = Walking();
  v1::KernelInfo& k = *s.mutable_kernel();
  k.set_release("6.16.12-cloud-amd64");
  k.set_version("#1 SMP PREEMPT_DYNAMIC Debian 6.16.12-1 (2025-10-14)");
  k.set_upstream_version("6.16.12");
  k.set_upstream_version_source("/proc/version (Debian 6.16.12-1)");
  k.set_arch("x86_64");
  return s;
}

TEST(WhatIfTest, KernelReleaseReplacesEverySourceOfTheRows) {
  v1::WhatIf w;
  w.set_kernel_release("6.19.0");
  v1::HostSnapshot s = Debian();
  ModelOptions o;
  ApplyWhatIf(w, s, o);
  EXPECT_EQ(s.kernel().release(), "6.19.0");
  EXPECT_FALSE(s.kernel().has_version());
  EXPECT_FALSE(s.kernel().has_upstream_version());
  EXPECT_EQ(s.kernel().upstream_version_source(), "");
  EXPECT_EQ(s.kernel().arch(), "x86_64");  // the host's
  const KernelFeatures f = ResolveKernelFeatures(s.kernel(), o);
  ASSERT_TRUE(f.release.has_value());
  EXPECT_EQ(f.release->ToString(), "6.19.0");
  EXPECT_EQ(f.release_kind, ReleaseKind::kMainline);
  EXPECT_EQ(f.vendor, "");
  // 6.19: entry-only fprobes are off fgraph; an exit handler is on it.
  EXPECT_FALSE(PredictAttach(s, v1::PROBE_KIND_KPROBE_MULTI, o).uses_fgraph());
  EXPECT_TRUE(
      PredictAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, o).uses_fgraph());
  // The basis says whose rows they are.
  v1::AttachPrediction p =
      PredictAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, o);
  ExplainAttach(s, o, &p);
  EXPECT_NE(std::find(p.basis().notes().begin(), p.basis().notes().end(),
                      "kernel release overridden (what-if): feature rows "
                      "asked about 6.19.0; the running kernel's version "
                      "string and upstream version set aside"),
            p.basis().notes().end())
      << p.basis().ShortDebugString();
  EXPECT_EQ(p.basis().feature_rows(0),
            "fprobe_on_fgraph: since 6.14 -> 6.19.0: yes");
  // Without the what-if the host's upstream 6.16.12 decides: both on it.
  EXPECT_TRUE(
      PredictAttach(Debian(), v1::PROBE_KIND_KPROBE_MULTI, {}).uses_fgraph());

  // A Debian ABI string: Debian's kernel without an upstream version, rows
  // by its numbers, counted as unknown with the built-in table.
  w.set_kernel_release("6.12.0-1-amd64");
  s = Debian();
  ApplyWhatIf(w, s, o);
  const KernelFeatures abi = ResolveKernelFeatures(s.kernel(), o);
  ASSERT_TRUE(abi.release.has_value());
  EXPECT_EQ(abi.release->Version(), "6.12.0");
  EXPECT_EQ(abi.release_kind, ReleaseKind::kVendorUnmapped);
  EXPECT_EQ(abi.vendor, "Debian");
  EXPECT_TRUE(abi.release_unknown);
  EXPECT_FALSE(
      PredictAttach(s, v1::PROBE_KIND_KPROBE_MULTI_RETURN, o).uses_fgraph());
}

TEST(WhatIfTest, RejectsUnusableOverrides) {
  v1::WhatIf w;
  auto refused = [](const v1::WhatIf& w, const std::string& message) {
    const absl::Status st = CheckWhatIf(w);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
    EXPECT_EQ(st.message(), message);
  };
  w.set_batch(0);
  refused(w, "what_if.batch: must be > 0");
  w.set_batch(1);
  EXPECT_TRUE(CheckWhatIf(w).ok());
  w.Clear();
  w.set_c_visit_seconds(std::nan(""));
  refused(w, "what_if.c_visit_seconds: must be > 0");
  w.set_c_visit_seconds(0);
  refused(w, "what_if.c_visit_seconds: must be > 0");
  w.set_c_visit_seconds(1e-12);
  EXPECT_TRUE(CheckWhatIf(w).ok());
  w.Clear();
  w.set_latency_budget_seconds(-1);
  refused(w, "what_if.latency_budget_seconds: must be > 0");
  w.set_latency_budget_seconds(0);
  refused(w, "what_if.latency_budget_seconds: must be > 0");
  w.Clear();
  w.set_threads(10);
  w.set_null_threads(11);
  refused(w, "what_if.null_threads: more than threads");
  w.set_null_threads(10);  // every thread NULL
  EXPECT_TRUE(CheckWhatIf(w).ok());
  w.Clear();
  w.set_kernel_release("not-a-kernel");
  refused(w, "what_if.kernel_release: cannot parse \"not-a-kernel\"");
  // PID_MAX_LIMIT (4,194,304 on 64-bit): one more thread is no host.
  w.Clear();
  w.set_threads(4194305);
  absl::Status st = CheckWhatIf(w);
  EXPECT_TRUE(absl::IsInvalidArgument(st));
  EXPECT_NE(st.message().find("what_if.threads"), std::string::npos) << st;
  w.set_threads(4194304);
  EXPECT_TRUE(CheckWhatIf(w).ok());
  w.Clear();
  w.set_null_threads(4194305);
  st = CheckWhatIf(w);
  EXPECT_NE(st.message().find("what_if.null_threads"), std::string::npos) << st;
}

}  // namespace
}  // namespace tracehealth::server
