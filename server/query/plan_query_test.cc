// PredictAttach with a plan, on hosts whose predictions are worked out by
// hand below (the real store, index and models).
#include <map>
#include <string>
#include <vector>

#include "common/models/evaluate.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/query/query_service.h"
#include "server/query/single_what_ifs.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

// kprobe_multi_return on 6.16.3 registers an fgraph user (fprobe on fgraph
// from 6.14, an exit handler). The sample hosts run a PREEMPT_DYNAMIC build
// (kernel.preempt_dynamic), so whatever the mode, c_visit is the preemption
// build's 88.7 ns and PREEMPT_RCU is on (derived).
//
// A first user (fgraph never active) walks the threads: batch B = 32,
// N_null = N_total = N (at the tail), P = ceil(N / 32) passes of which
// P - 1 stop early, V = 32 (P-1) P / 2 + (P-1) + N visits, and
// walk = 88.7 ns V + 2 us P + 20 ns N.
//
//   N = 3,200:   P = 100,   V = 158,400 + 99 + 3,200 = 161,699
//   N = 64,000:  P = 2,000, V = 63,968,000 + 1,999 + 64,000 = 64,033,999
//   N = 96,000:  P = 3,000, V = 143,952,000 + 2,999 + 96,000 = 144,050,999
//   N = 128,000: P = 4,000, V = 255,936,000 + 3,999 + 128,000 = 256,067,999
//
// A second user (fgraph active; several users from 6.11) is one
// init_task_vars pass: 88.7 ns N + 2 us. Patching, either way: a fprobe
// kind's typical 100 sites at 1.069 s / 48,712 each = 2.1945 ms.
double Walk(double visits, double passes, double n) {
  return 88.7e-9 * visits + 2e-6 * passes + 20e-9 * n;
}
const double kPatch = 100 * (1.069 / 48712);                     // 2.1945 ms
const double kT3200 = Walk(161699, 100, 3200) + kPatch;          // 0.0168 s
const double kT64000 = Walk(64033999, 2000, 64000) + kPatch;     // 5.6873 s
const double kT96000 = Walk(144050999, 3000, 96000) + kPatch;    // 12.787 s
const double kT128000 = Walk(256067999, 4000, 128000) + kPatch;  // 22.726 s
// 35.482 ms + 2 us + 2.1945 ms = 37.677 ms.
const double kTActive400k = 88.7e-9 * 400000 + 2e-6 + kPatch;

v1::HostReport Host(const std::string& id, uint64_t threads,
                    v1::PreemptMode preempt, bool fgraph_active = false) {
  SampleHost h;
  h.host_id = id;
  h.threads = threads;
  h.kernel_release = "6.16.3";
  h.preempt = preempt;
  h.fgraph_active = fgraph_active;
  return SampleReport(h, 1, absl::FromUnixSeconds(1800000000 - 10));
}

class PlanQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStorage::Open(testing::NewTempDir("plan") + "/q.db");
    ASSERT_TRUE(s.ok());
    storage_ = std::move(*s);
    std::vector<v1::HostReport> reports = {
        // Preemptible, small: 16.8 ms, risk none (FULL with PREEMPT_RCU:
        // the walk is preemptible, no stretch counts against a threshold).
        Host("a-safe", 3200, v1::PREEMPT_MODE_FULL),
        // fgraph already active: a second user, one pass over 400,000
        // threads (35.5 ms) and the sites, 37.7 ms, even on PREEMPT_NONE.
        Host("b-active", 400000, v1::PREEMPT_MODE_NONE, true),
        // Preemptible: 5.687 s blocked, latency only.
        Host("c-over", 64000, v1::PREEMPT_MODE_LAZY),
        // PREEMPT_NONE: nothing in the walk reschedules, so the whole
        // 12.787 s walk runs without yielding: 0.64 of the 20 s soft-lockup
        // threshold (2 x watchdog_thresh 10), a warning. (The RCU stretch
        // is one pass, 8.5 ms: PREEMPT_RCU.)
        Host("d-warn", 96000, v1::PREEMPT_MODE_NONE),
        // 22.726 s: 1.14 x 20 s, a soft lockup.
        Host("e-stall", 128000, v1::PREEMPT_MODE_NONE),
        // The same walk with the preemption mode unknown: it decides.
        Host("f-unknown", 128000, v1::PREEMPT_MODE_UNKNOWN),
        // No thread count: a walk of unknown length.
        Host("g-nothreads", 128000, v1::PREEMPT_MODE_NONE),
    };
    v1::HostReport& g = reports.back();
    g.mutable_snapshot()->mutable_threads()->clear_total();
    *g.mutable_predictions() = PredictAll(g.snapshot());
    std::vector<ReportRow> rows;
    std::vector<CommittedReport> committed;
    for (const v1::HostReport& r : reports) {
      ReportRow row;
      row.host_id = r.host_id();
      row.seq = r.seq();
      row.received_at_ns = absl::ToUnixNanos(now_);
      row.blob = r.SerializeAsString();
      rows.push_back(row);
      committed.push_back({StoredReport::Of(r), now_});
    }
    ASSERT_TRUE(storage_->WriteBatch(rows).ok());
    index_.Apply(committed);
    QueryOptions opts;
    opts.now = [this] { return now_; };
    opts.store = storage_.get();
    service_ =
        std::make_unique<QueryService>(&index_, storage_.get(), nullptr, opts);
  }

  v1::PredictAttachResponse Plan(int64_t max_latency_ns, uint32_t wave_ids,
                                 uint32_t limit = 0,
                                 const v1::WhatIf& what_if = {}) {
    v1::PredictAttachRequest req;
    req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
    *req.mutable_plan()->mutable_max_latency() =
        TimeUtil::NanosecondsToDuration(max_latency_ns);
    req.mutable_plan()->set_wave_host_ids(wave_ids);
    req.set_limit(limit);
    *req.mutable_what_if() = what_if;
    v1::PredictAttachResponse resp;
    grpc::Status st = service_->DoPredictAttach(req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }

  absl::Time now_ = absl::FromUnixSeconds(1800000000);
  std::unique_ptr<SqliteStorage> storage_;
  HostIndex index_;
  std::unique_ptr<QueryService> service_;
};

std::vector<std::string> Ids(const v1::PlanWave& w) {
  return {w.host_ids().begin(), w.host_ids().end()};
}

TEST_F(PlanQueryTest, EveryHostInItsClassAndTheWavesInRolloutOrder) {
  const v1::PredictAttachResponse r = Plan(2000000000, 1, 3);  // 2 s
  EXPECT_EQ(r.matched_hosts(), 7u);
  const v1::RolloutPlan& p = r.plan();
  EXPECT_EQ(p.max_latency().seconds(), 2);
  EXPECT_EQ(p.safe(), 2u);         // a-safe, b-active
  EXPECT_EQ(p.over_budget(), 1u);  // c-over
  EXPECT_EQ(p.lockup_risk(), 2u);  // d-warn, e-stall
  EXPECT_EQ(p.unknown(), 2u);      // f-unknown, g-nothreads
  ASSERT_EQ(p.waves_size(), 4);
  using V = std::vector<std::string>;
  EXPECT_EQ(p.waves(0).number(), 1u);
  EXPECT_EQ(p.waves(0).plan_class(), v1::PLAN_CLASS_SAFE);
  EXPECT_EQ(p.waves(0).hosts(), 2u);
  // b-active's 37.7 ms is the wave's longest; a-safe's 16.8 ms goes first.
  EXPECT_DOUBLE_EQ(p.waves(0).max_latency_seconds(), kTActive400k);
  EXPECT_EQ(Ids(p.waves(0)), V{"a-safe"});
  EXPECT_EQ(p.waves(1).plan_class(), v1::PLAN_CLASS_OVER_BUDGET);
  EXPECT_EQ(p.waves(1).hosts(), 1u);
  EXPECT_DOUBLE_EQ(p.waves(1).max_latency_seconds(), kT64000);
  EXPECT_EQ(Ids(p.waves(1)), V{"c-over"});
  EXPECT_EQ(p.waves(2).plan_class(), v1::PLAN_CLASS_LOCKUP_RISK);
  EXPECT_EQ(p.waves(2).hosts(), 2u);
  EXPECT_DOUBLE_EQ(p.waves(2).max_latency_seconds(), kT128000);
  EXPECT_EQ(Ids(p.waves(2)), V{"d-warn"});
  EXPECT_EQ(p.waves(3).number(), 4u);
  EXPECT_EQ(p.waves(3).plan_class(), v1::PLAN_CLASS_UNKNOWN);
  EXPECT_EQ(p.waves(3).hosts(), 2u);
  // f-unknown's walk is predicted (22.726 s), its risk is what is unknown;
  // g-nothreads has only the patching term (2.1945 ms).
  EXPECT_DOUBLE_EQ(p.waves(3).max_latency_seconds(), kT128000);
  EXPECT_EQ(Ids(p.waves(3)), V{"g-nothreads"});
  for (const v1::PlanWave& w : p.waves()) EXPECT_FALSE(w.action().empty());
  EXPECT_EQ(p.waves(3).action().rfind("hold:", 0), 0u) << p.waves(3).action();

  // The worst three, explained, each with its class.
  ASSERT_EQ(r.answers_size(), 3);
  EXPECT_EQ(r.answers(0).host_id(), "e-stall");
  EXPECT_EQ(r.answers(0).prediction().risk(), v1::RISK_STALL);
  EXPECT_DOUBLE_EQ(r.answers(0).prediction().latency_seconds(), kT128000);
  EXPECT_EQ(r.answers(0).plan_class(), v1::PLAN_CLASS_LOCKUP_RISK);
  EXPECT_EQ(r.answers(1).host_id(), "d-warn");
  EXPECT_EQ(r.answers(1).prediction().risk(), v1::RISK_WARNING);
  EXPECT_DOUBLE_EQ(r.answers(1).prediction().latency_seconds(), kT96000);
  EXPECT_EQ(r.answers(1).plan_class(), v1::PLAN_CLASS_LOCKUP_RISK);
  EXPECT_EQ(r.answers(2).host_id(), "c-over");
  EXPECT_EQ(r.answers(2).prediction().risk(), v1::RISK_LATENCY);
  EXPECT_EQ(r.answers(2).plan_class(), v1::PLAN_CLASS_OVER_BUDGET);
  // The plan's budget is the models' latency budget: 5.687 s / 2 s.
  bool budget_check = false;
  for (const v1::ThresholdCheck& c : r.answers(2).prediction().checks()) {
    if (c.kind() != v1::ThresholdCheck::KIND_LATENCY) continue;
    budget_check = true;
    EXPECT_DOUBLE_EQ(c.threshold(), 2.0);
    EXPECT_DOUBLE_EQ(c.margin(), kT64000 / 2.0);
  }
  EXPECT_TRUE(budget_check);
  EXPECT_FALSE(r.answers(0).prediction().summary().empty());

  // All seven: after the latency risks the safe ones, longest first, then
  // the unknown ones (RISK_UNKNOWN ranks lowest).
  const v1::PredictAttachResponse all = Plan(2000000000, 0, 7);
  ASSERT_EQ(all.answers_size(), 7);
  EXPECT_EQ(all.answers(3).host_id(), "b-active");
  EXPECT_EQ(all.answers(3).prediction().risk(), v1::RISK_NONE);
  EXPECT_DOUBLE_EQ(all.answers(3).prediction().latency_seconds(), kTActive400k);
  EXPECT_EQ(all.answers(4).host_id(), "a-safe");
  EXPECT_EQ(all.answers(4).prediction().risk(), v1::RISK_NONE);
  EXPECT_DOUBLE_EQ(all.answers(4).prediction().latency_seconds(), kT3200);
  EXPECT_EQ(all.answers(5).host_id(), "f-unknown");
  EXPECT_EQ(all.answers(6).host_id(), "g-nothreads");
  EXPECT_DOUBLE_EQ(all.answers(6).prediction().latency_seconds(), kPatch);
}

TEST_F(PlanQueryTest, OverBudgetFromExactlyTheBudget) {
  // c-over blocks 5.6872902424 s: over a budget of 5.687290242 s (just
  // below), safe under 5.687290243 s (just above).
  ASSERT_GT(kT64000, 5.687290242);
  ASSERT_LT(kT64000, 5.687290243);
  const v1::PredictAttachResponse at = Plan(5687290242, 0);
  EXPECT_EQ(at.plan().over_budget(), 1u);
  EXPECT_EQ(at.plan().safe(), 2u);
  EXPECT_EQ(at.plan().waves(1).host_ids_size(), 0);  // counts only
  const v1::PredictAttachResponse above = Plan(5687290243, 0);
  EXPECT_EQ(above.plan().over_budget(), 0u);
  EXPECT_EQ(above.plan().safe(), 3u);
  EXPECT_EQ(above.plan().lockup_risk(), 2u);
  EXPECT_EQ(above.plan().waves_size(), 3);  // no over-budget wave
}

TEST_F(PlanQueryTest, AWhatIfReplansEveryHost) {
  // On a preemptible kernel the walks are latency only: d-warn, e-stall and
  // f-unknown become over budget; g-nothreads stays unknown.
  v1::WhatIf lazy;
  lazy.set_preempt_mode(v1::PREEMPT_MODE_LAZY);
  const v1::PredictAttachResponse r = Plan(2000000000, 10, 0, lazy);
  EXPECT_EQ(r.plan().safe(), 2u);
  EXPECT_EQ(r.plan().over_budget(), 4u);
  EXPECT_EQ(r.plan().lockup_risk(), 0u);
  EXPECT_EQ(r.plan().unknown(), 1u);
  ASSERT_EQ(r.plan().waves_size(), 3);
  EXPECT_EQ(r.plan().waves(1).plan_class(), v1::PLAN_CLASS_OVER_BUDGET);
  // Least latency first; e-stall and f-unknown tie at 22.7 s, by id.
  EXPECT_EQ(
      Ids(r.plan().waves(1)),
      (std::vector<std::string>{"c-over", "d-warn", "e-stall", "f-unknown"}));
  EXPECT_EQ(r.plan().waves(2).number(), 3u);
  EXPECT_EQ(r.plan().waves(2).plan_class(), v1::PLAN_CLASS_UNKNOWN);
}

// The fleet-wide what-if marks the inputs it replaces as the host-by-host
// one does (what_if_test): each override alone is listed OVERRIDDEN in the
// answer's basis, the host's other inputs keep their own source.
TEST_F(PlanQueryTest, EachOverriddenInputIsListedAsOverridden) {
  for (const SingleWhatIf& one : kSingleWhatIfs) {
    SCOPED_TRACE(one.input);
    v1::PredictAttachRequest req;
    req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
    req.mutable_hosts()->add_host_ids("e-stall");
    one.set(*req.mutable_what_if());
    v1::PredictAttachResponse resp;
    grpc::Status st = service_->DoPredictAttach(req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(resp.answers_size(), 1);
    std::map<std::string, v1::InputSource> got;
    for (const v1::BasisInput& in :
         resp.answers(0).prediction().basis().inputs())
      got[in.name()] = in.source();
    EXPECT_EQ(got[one.input], v1::INPUT_SOURCE_OVERRIDDEN);
    for (const auto& [name, source] : got) {
      if (name != one.input && name != "fgraph.null_threads_bound") {
        EXPECT_NE(source, v1::INPUT_SOURCE_OVERRIDDEN) << name;
      }
    }
  }
}

TEST_F(PlanQueryTest, BadPlansAreRefusedWithTheField) {
  struct Case {
    std::function<void(v1::PredictAttachRequest&)> set;
    std::string message;
  } cases[] = {
      {[](auto& r) { r.mutable_plan(); },
       "plan.max_latency: required, must be > 0"},
      {[](auto& r) {
         r.mutable_plan()->mutable_max_latency()->set_seconds(-1);
       },
       "plan.max_latency: required, must be > 0"},
      {[](auto& r) {
         r.mutable_plan()->mutable_max_latency()->set_seconds(2);
         r.mutable_plan()->set_wave_host_ids(100001);
       },
       "plan.wave_host_ids: at most 100000, got 100001"},
      {[](auto& r) {
         r.mutable_plan()->mutable_max_latency()->set_seconds(2);
         r.mutable_what_if()->set_latency_budget_seconds(3);
       },
       "what_if.latency_budget_seconds: a plan's budget is plan.max_latency; "
       "leave it unset"},
  };
  for (const Case& c : cases) {
    v1::PredictAttachRequest req;
    c.set(req);
    v1::PredictAttachResponse resp;
    grpc::Status st = service_->DoPredictAttach(req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.message;
    EXPECT_EQ(st.error_message(), c.message);
  }
  // 100,000 ids per wave is allowed.
  v1::PredictAttachRequest ok;
  ok.mutable_plan()->mutable_max_latency()->set_seconds(2);
  ok.mutable_plan()->set_wave_host_ids(100000);
  v1::PredictAttachResponse resp;
  EXPECT_TRUE(service_->DoPredictAttach(ok, &resp).ok());
}

}  // namespace
}  // namespace tracehealth::server
