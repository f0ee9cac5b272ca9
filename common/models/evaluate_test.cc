#include "common/models/evaluate.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(EvaluateTest, OneAttachPredictionPerKindInOrder) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.18.2");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  s.mutable_threads()->set_total(240000);
  s.mutable_fgraph()->set_active(false);
  v1::Predictions p = EvaluateAll(s);
  ASSERT_EQ(p.attach_size(), 10);
  for (int i = 0; i < p.attach_size(); ++i) {
    EXPECT_EQ(p.attach(i).probe_kind(), i + 1);
    EXPECT_EQ(p.attach(i).SerializeAsString(),
              EvaluateAttach(s, p.attach(i).probe_kind()).SerializeAsString());
  }
  EXPECT_EQ(p.worst_risk(), v1::RISK_STALL);
}

TEST(EvaluateTest, AllThreeModelsFilled) {
  // A 256-CPU KASAN host on 6.10 with a full stack depot.
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.10.0");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_FULL);
  s.mutable_kernel()->set_config_kasan(true);
  s.mutable_kernel()->set_config_kasan_vmalloc(true);
  s.mutable_kernel()->set_config_stackdepot(true);
  s.mutable_threads()->set_total(2000);
  s.mutable_fgraph()->set_active(false);
  s.mutable_cpus()->set_online(256);
  s.mutable_vmalloc()->set_unpurged_shadow_page_areas(2804);
  s.mutable_stackdepot()->set_pools(4096);
  v1::Predictions p = EvaluateAll(s);
  EXPECT_TRUE(p.stack_depot().applies());
  EXPECT_DOUBLE_EQ(p.stack_depot().budget_ratio(), 0.5);
  EXPECT_EQ(p.stack_depot().risk(), v1::RISK_NONE);
  EXPECT_TRUE(p.vmap_purge().applies());
  EXPECT_EQ(p.vmap_purge().flushes_per_purge(), 2805u);
  // Preemptible kernel: the purge is no lockup risk and the attach walk of
  // 2,000 threads is short.
  EXPECT_EQ(p.vmap_purge().risk(), v1::RISK_NONE);
  EXPECT_EQ(p.worst_risk(), v1::RISK_NONE);
  for (const auto& a : p.attach()) {
    EXPECT_FALSE(a.summary().empty());
    EXPECT_GT(a.basis().confidence(), 0);
  }
  // Non-preemptible: the purge locks up, and that is the worst risk.
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  p = EvaluateAll(s);
  EXPECT_EQ(p.vmap_purge().risk(), v1::RISK_STALL);
  EXPECT_EQ(p.worst_risk(), v1::RISK_STALL);
}

TEST(EvaluateTest, EmptySnapshotIsUnknownNotAFailure) {
  v1::Predictions p = EvaluateAll(v1::HostSnapshot());
  EXPECT_EQ(p.attach_size(), 10);
  EXPECT_EQ(p.stack_depot().risk(), v1::RISK_UNKNOWN);
  EXPECT_EQ(p.vmap_purge().risk(), v1::RISK_UNKNOWN);
}

TEST(EvaluateTest, IntoAReusedMessageEqualsByValue) {
  v1::HostSnapshot a;
  a.mutable_kernel()->set_release("6.18.2");
  a.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  a.mutable_kernel()->set_config_kasan_vmalloc(true);
  a.mutable_kernel()->set_config_kasan(true);
  a.mutable_threads()->set_total(240000);
  a.mutable_stackdepot()->set_pools(100);
  a.mutable_cpus()->set_online(64);
  v1::HostSnapshot b;  // sparse: different shape of every prediction
  b.mutable_kernel()->set_release("6.13.0");
  b.mutable_fgraph()->set_active(true);
  v1::Predictions reused;
  for (int round = 0; round < 3; ++round) {
    for (const v1::HostSnapshot* s : {&a, &b}) {
      EvaluateAllInto(*s, {}, &reused);
      EXPECT_EQ(reused.SerializeAsString(),
                EvaluateAll(*s).SerializeAsString());
    }
  }
  // Whatever the message held before is replaced.
  v1::Predictions dirty;
  dirty.add_attach()->set_summary("stale");
  for (int i = 0; i < 12; ++i) dirty.add_attach();
  dirty.mutable_stack_depot()->add_checks();
  EvaluateAllInto(b, {}, &dirty);
  EXPECT_EQ(dirty.SerializeAsString(), EvaluateAll(b).SerializeAsString());
}

// Odd hosts: random subsets of inputs with extreme values. Nothing may
// crash, every number must be finite and every prediction explained.
TEST(EvaluateTest, OddSnapshotsNeverBreakTheModels) {
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  const uint64_t extremes[] = {0,    1,      31,     32,         33,
                               1024, 240000, 400080, 1ull << 32, ~0ull};
  auto pick = [&] { return extremes[next() % 10]; };
  const char* releases[] = {"6.1.0",     "6.13.0",      "6.14",  "6.18.2",
                            "6.18.35-x", "6.19-rc3",    "7.1.5", "banana",
                            "",          "99.9999.9999"};
  for (int i = 0; i < 3000; ++i) {
    v1::HostSnapshot s;
    if (next() % 4) s.mutable_kernel()->set_release(releases[next() % 10]);
    s.mutable_kernel()->set_preempt_mode(
        static_cast<v1::PreemptMode>(next() % 6));
    if (next() % 2) s.mutable_kernel()->set_config_kasan_vmalloc(next() % 2);
    if (next() % 2) s.mutable_kernel()->set_config_kasan(next() % 2);
    if (next() % 2)
      s.mutable_kernel()->set_page_size(static_cast<uint32_t>(pick()));
    if (next() % 2) {
      s.mutable_kernel()->set_config_stackdepot_max_frames(
          static_cast<uint32_t>(pick()));
    }
    if (next() % 2) s.mutable_threads()->set_total(pick());
    if (next() % 2) s.mutable_fgraph()->set_active(next() % 2);
    if (next() % 2) s.mutable_fgraph()->set_null_threads_bound(pick());
    if (next() % 2) s.mutable_fgraph()->set_available_filter_functions(pick());
    if (next() % 2)
      s.mutable_thresholds()->set_watchdog_thresh_seconds(next() % 3 * 10);
    if (next() % 2)
      s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(next() % 3 *
                                                                21);
    if (next() % 2) s.mutable_cpus()->set_online(static_cast<uint32_t>(pick()));
    if (next() % 2) s.mutable_cpus()->set_invlpgb(next() % 2);
    if (next() % 2) s.mutable_stackdepot()->set_pools(pick());
    if (next() % 2) s.mutable_stackdepot()->set_max_pools(pick());
    if (next() % 2) s.mutable_stackdepot()->set_persistent_bytes(pick());
    for (uint64_t h = next() % 4; h > 0; --h) {
      v1::DepotSample* d = s.add_depot_history();
      d->mutable_at()->set_seconds(static_cast<int64_t>(next() % 1000));
      d->set_pools(pick());
    }
    if (next() % 2) s.mutable_vmalloc()->set_unpurged_areas(pick());
    if (next() % 2) s.mutable_vmalloc()->set_unpurged_shadow_page_areas(pick());
    ModelOptions options;
    if (next() % 4 == 0) options.batch = static_cast<uint32_t>(pick());
    if (next() % 4 == 0)
      options.latency_budget_seconds = static_cast<double>(next() % 100);
    v1::Predictions p = EvaluateAll(s, options);
    ASSERT_EQ(p.attach_size(), 10);
    for (const auto& a : p.attach()) {
      EXPECT_TRUE(std::isfinite(a.latency_seconds())) << s.DebugString();
      EXPECT_TRUE(std::isfinite(a.visits()));
      EXPECT_GE(a.latency_seconds(), 0);
      EXPECT_FALSE(a.summary().empty());
      EXPECT_GT(a.basis().confidence(), 0);
      for (const auto& c : a.checks()) EXPECT_TRUE(std::isfinite(c.margin()));
    }
    EXPECT_TRUE(std::isfinite(p.vmap_purge().purge_seconds()));
    EXPECT_FALSE(p.stack_depot().summary().empty());
    EXPECT_FALSE(p.vmap_purge().summary().empty());
    if (p.stack_depot().has_seconds_to_exhaustion()) {
      EXPECT_TRUE(std::isfinite(p.stack_depot().seconds_to_exhaustion()));
    }
  }
}

template <typename P>
void StripProse(P* p) {
  p->clear_summary();
  const double confidence = p->basis().confidence();
  p->mutable_basis()->Clear();
  p->mutable_basis()->set_confidence(confidence);
}

// What a report carries (PredictAll) is EvaluateAll without its prose, to
// the byte: the explanations add text and never change a number.
TEST(EvaluateTest, PredictAllIsEvaluateAllWithoutProse) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.12.5");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  s.mutable_kernel()->set_config_kasan(true);
  s.mutable_kernel()->set_config_kasan_vmalloc(true);
  s.mutable_threads()->set_total(61000);
  s.mutable_cpus()->set_online(256);
  s.mutable_stackdepot()->set_pools(7950);
  s.mutable_vmalloc()->set_unpurged_areas(3000);
  for (const v1::HostSnapshot& snapshot : {s, v1::HostSnapshot()}) {
    v1::Predictions full = EvaluateAll(snapshot);
    const v1::Predictions numbers = PredictAll(snapshot);
    for (v1::AttachPrediction& a : *full.mutable_attach()) {
      EXPECT_FALSE(a.summary().empty());
      StripProse(&a);
    }
    StripProse(full.mutable_stack_depot());
    StripProse(full.mutable_vmap_purge());
    EXPECT_EQ(numbers.SerializeAsString(), full.SerializeAsString());
    EXPECT_EQ(
        PredictAttach(snapshot, v1::PROBE_KIND_KPROBE_MULTI)
            .SerializeAsString(),
        numbers.attach(v1::PROBE_KIND_KPROBE_MULTI - 1).SerializeAsString());
  }
}

TEST(EvaluateTest, Deterministic) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.19");
  s.mutable_threads()->set_total(5000);
  EXPECT_EQ(EvaluateAll(s).SerializeAsString(),
            EvaluateAll(s).SerializeAsString());
}

}  // namespace
}  // namespace tracehealth
