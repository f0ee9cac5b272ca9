#include "server/query/what_if.h"

#include <cmath>

#include "gtest/gtest.h"

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

TEST(WhatIfTest, RejectsUnusableOverrides) {
  v1::WhatIf w;
  w.set_batch(0);
  EXPECT_TRUE(absl::IsInvalidArgument(CheckWhatIf(w)));
  w.Clear();
  w.set_c_visit_seconds(std::nan(""));
  EXPECT_FALSE(CheckWhatIf(w).ok());
  w.Clear();
  w.set_latency_budget_seconds(-1);
  EXPECT_FALSE(CheckWhatIf(w).ok());
  w.Clear();
  w.set_threads(10);
  w.set_null_threads(11);
  EXPECT_FALSE(CheckWhatIf(w).ok());
  w.Clear();
  w.set_kernel_release("not-a-kernel");
  EXPECT_FALSE(CheckWhatIf(w).ok());
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
