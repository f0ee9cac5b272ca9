// Every what-if field on a mainline host, a Debian host and an Ubuntu host,
// through the real tracehealth-server on loopback: PredictAttach's answer
// (the model re-run on the stored report, explained), the fleet scan over
// compact records (a rollout plan's wave: its class and its largest latency
// come from AttachEvaluator, not from the report) and /api/v1/predict (what
// the page's what-if form posts). The hosts are the agent's snapshots of the
// fixture trees; every expected number is worked out by hand (what_if_cases.cc)
// from common/kernel/features.yaml and the formulas of docs/design.md §3.1.
//
// A what-if kernel release names the kernel to judge: on a Debian or Ubuntu
// host the running kernel's upstream version (/proc/version,
// /proc/version_signature) and version string no longer decide the rows.
#include <signal.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/collect/collector.h"
#include "common/kernel/release.h"
#include "common/models/evaluate.h"
#include "common/procfs/host_fs.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/agent/fixture_util.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_process.h"
#include "tests/server/what_if_cases.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

// The report the agent sends for fixture host `h`.
v1::HostReport ReportOf(const Host& h) {
  const absl::Time now = absl::Now();
  HostFs fs(FixtureRoot(h.fixture));
  agent::Collector c(&fs, agent::CollectorOptions{}, [now] { return now; });
  v1::HostReport r;
  r.set_host_id(h.id);
  r.set_seq(1);
  *r.mutable_observed_at() =
      google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
          absl::ToUnixNanos(now));
  r.set_agent_version("1.0.0");
  r.set_model_version(kModelVersion);
  r.set_interval_seconds(30);
  (*r.mutable_labels())["kernel"] = h.id;
  *r.mutable_snapshot() = c.Collect();
  *r.mutable_predictions() = PredictAll(r.snapshot());
  return r;
}

std::string Describe(const Case& c) {
  return absl::StrCat(c.host, " ", v1::ProbeKind_Name(c.kind), " what-if {",
                      c.what_if, "}");
}

v1::WhatIf WhatIfOf(const Case& c) {
  v1::WhatIf w;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(c.what_if, &w))
      << c.what_if;
  return w;
}

// Checks an explained prediction against `want`.
void CheckAnswer(const Case& c, const v1::AttachPrediction& p) {
  const Expect& want = c.want;
  SCOPED_TRACE(Describe(c));
  EXPECT_EQ(p.uses_fgraph(), want.uses_fgraph);
  EXPECT_EQ(p.busy(), want.busy);
  EXPECT_EQ(p.passes(), want.passes);
  EXPECT_EQ(v1::Risk_Name(p.risk()), v1::Risk_Name(want.risk));
  EXPECT_NEAR(p.latency_seconds(), want.latency, want.latency * 1e-9 + 1e-12);
  if (want.shadow_stack_bytes != 0) {
    EXPECT_EQ(p.shadow_stack_bytes(), want.shadow_stack_bytes);
  }
  bool noted = *want.note == '\0';
  for (const std::string& n : p.basis().notes()) {
    noted |= !noted && absl::StrContains(n, want.note);
  }
  EXPECT_TRUE(noted) << "no note with \"" << want.note << "\" in "
                     << p.basis().ShortDebugString();
}

// A kernel-release what-if: the basis lists the release as overridden with
// the what-if's value, says the rows were asked about it, and every row
// names it.
void CheckReleaseBasis(const Case& c, const v1::WhatIf& w,
                       const v1::AttachPrediction& p) {
  if (!w.has_kernel_release()) return;
  SCOPED_TRACE(Describe(c));
  const v1::Basis& b = p.basis();
  bool listed = false;
  for (const v1::BasisInput& in : b.inputs()) {
    if (in.name() != "kernel.release") continue;
    listed = true;
    EXPECT_EQ(in.value(), w.kernel_release());
    EXPECT_EQ(in.source(), v1::INPUT_SOURCE_OVERRIDDEN);
  }
  EXPECT_TRUE(listed) << b.ShortDebugString();
  absl::StatusOr<KernelRelease> r = ParseKernelRelease(w.kernel_release());
  ASSERT_TRUE(r.ok());
  const std::string version = r->Version();
  bool said = false;
  for (const std::string& n : b.notes()) {
    said |= n == absl::StrCat(kOverriddenNote, version,
                              "; the running kernel's version string and "
                              "upstream version set aside");
  }
  EXPECT_TRUE(said) << b.ShortDebugString();
  // The host's vendor does not carry over: only a vendor ABI string makes
  // the what-if a vendor kernel.
  int vendor_notes = 0;
  for (const std::string& n : b.notes()) {
    vendor_notes += absl::StartsWith(n, "Debian kernel:") ||
                    absl::StartsWith(n, "Ubuntu kernel:");
  }
  EXPECT_EQ(vendor_notes,
            absl::StartsWith(c.want.note, "Debian kernel:") ? 1 : 0)
      << b.ShortDebugString();
  ASSERT_GT(b.feature_rows_size(), 0);
  for (const std::string& row : b.feature_rows()) {
    EXPECT_TRUE(absl::StrContains(row, absl::StrCat("-> ", version, ":")))
        << row;
  }
}

class WhatIfHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<ServerProcess> sp = StartServer(NewTempDir("what-if"));
    ASSERT_TRUE(sp.ok()) << sp.status();
    server_ = std::move(*sp);
    channel_ = grpc::CreateChannel(server_.grpc_addr,
                                   grpc::InsecureChannelCredentials());
    auto ingest = v1::TelemetryIngest::NewStub(channel_);
    for (const Host& h : kHosts) {
      ReportStream s(ingest.get());
      ASSERT_TRUE(s.Send(ReportOf(h))) << h.id;
      ASSERT_TRUE(s.WaitAcked(1))
          << h.id << ": "
          << (s.rejections().empty() ? "no rejection"
                                     : s.rejections()[0].ShortDebugString());
      ASSERT_TRUE(s.Finish().ok()) << h.id;
    }
    query_ = v1::FleetQuery::NewStub(channel_);
  }
  void TearDown() override {
    query_.reset();
    channel_.reset();
    if (server_.process != nullptr && server_.process->running()) {
      ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
      EXPECT_TRUE(server_.process->Wait(absl::Seconds(30)).ok());
    }
  }

  v1::PredictAttachResponse Predict(const v1::PredictAttachRequest& req) {
    grpc::ClientContext ctx;
    v1::PredictAttachResponse resp;
    grpc::Status st = query_->PredictAttach(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }

  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::FleetQuery::Stub> query_;
};

TEST_F(WhatIfHostsTest, EveryFieldOnEveryHostKind) {
  int checked = 0;
  for (const Case& c : Cases()) {
    const v1::WhatIf w = WhatIfOf(c);
    v1::PredictAttachRequest req;
    req.mutable_hosts()->add_host_ids(c.host);
    req.set_probe_kind(c.kind);
    *req.mutable_what_if() = w;
    // The answer: the model on the stored report, changed by the what-if.
    const v1::PredictAttachResponse answer = Predict(req);
    ASSERT_EQ(answer.answers_size(), 1) << Describe(c);
    CheckAnswer(c, answer.answers(0).prediction());
    CheckReleaseBasis(c, w, answer.answers(0).prediction());
    ++checked;
    // The fleet scan: the plan's one wave is classed and priced from the
    // host's compact record. Plan budget 1 s; a what-if budget is refused
    // with a plan.
    if (w.has_latency_budget_seconds()) continue;
    req.clear_hosts();
    req.mutable_hosts()->set_labels(absl::StrCat("kernel=", c.host));
    *req.mutable_plan()->mutable_max_latency() =
        google::protobuf::util::TimeUtil::SecondsToDuration(1);
    const v1::PredictAttachResponse plan = Predict(req);
    SCOPED_TRACE(Describe(c) + " (scan)");
    ASSERT_EQ(plan.matched_hosts(), 1u);
    ASSERT_EQ(plan.plan().waves_size(), 1);
    const v1::PlanWave& wave = plan.plan().waves(0);
    const v1::PlanClass want_class =
        c.want.risk == v1::RISK_STALL || c.want.risk == v1::RISK_WARNING
            ? v1::PLAN_CLASS_LOCKUP_RISK
        : c.want.latency >= 1 ? v1::PLAN_CLASS_OVER_BUDGET
                              : v1::PLAN_CLASS_SAFE;
    EXPECT_EQ(v1::PlanClass_Name(wave.plan_class()),
              v1::PlanClass_Name(want_class));
    EXPECT_NEAR(wave.max_latency_seconds(), c.want.latency,
                c.want.latency * 1e-9 + 1e-12);
  }
  EXPECT_EQ(checked, 50);
}

// /api/v1/predict, which the page's what-if form posts to: the same
// answer for the Debian host at 6.19.0.
TEST_F(WhatIfHostsTest, HttpApiTakesTheKernelWhatIf) {
  absl::StatusOr<std::string> body = HttpGet(
      server_.metrics_addr,
      "/api/v1/predict?hosts.host_ids=debian&probe_kind=PROBE_KIND_KPROBE_MULTI"
      "&what_if.kernel_release=6.19.0");
  ASSERT_TRUE(body.ok()) << body.status();
  v1::PredictAttachResponse resp;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*body, &resp).ok())
      << *body;
  ASSERT_EQ(resp.answers_size(), 1) << *body;
  const Case c{"debian",
               kMulti,
               "kernel_release: '6.19.0'",
               {false, false, 0, v1::RISK_NONE, kFprobePatch, kEntryOnlyOff}};
  CheckAnswer(c, resp.answers(0).prediction());
  CheckReleaseBasis(c, WhatIfOf(c), resp.answers(0).prediction());
}

}  // namespace
}  // namespace tracehealth::testing
