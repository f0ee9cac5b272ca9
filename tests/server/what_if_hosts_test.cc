// Every what-if field on a mainline host, a Debian host and an Ubuntu host,
// through the real tracehealth-server on loopback: PredictAttach's answer
// (the model re-run on the stored report, explained), the fleet scan over
// compact records (a rollout plan's wave: its class and its largest latency
// come from AttachEvaluator, not from the report) and /api/v1/predict (what
// the page's what-if form posts). The hosts are the agent's snapshots of the
// fixture trees; every expected number is worked out by hand below from
// common/kernel/features.yaml and the formulas of docs/design.md §3.1.
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
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

// The hosts, by the kind of kernel they run.
//
// mainline: kasan-6.12-256cpu, 6.12.3, static PREEMPT_NONE build
//   (c_visit 58.7 ns), no PREEMPT_RCU, 61,000 threads, fgraph never active
//   (N_null = N_total), 2,000 traceable functions, watchdog_thresh 10 (soft
//   lockup at 20 s), RCU stall at 21 s.
// debian: preempt-none-6.16-240k, "6.16.12-cloud-amd64", /proc/version
//   "... Debian 6.16.12-1": rows asked about 6.16.12. PREEMPT_DYNAMIC booted
//   none (c_visit 88.7 ns), PREEMPT_RCU, 240,000 threads, fgraph never
//   active, 2,000 functions, 20 s / 21 s.
// ubuntu: kprobe-multi-6.14, "6.14.0-1012-aws", /proc/version_signature
//   "Ubuntu 6.14.0-1012.12~24.04.1-aws 6.14.8": rows asked about 6.14.8.
//   PREEMPT_DYNAMIC booted voluntary (88.7 ns), PREEMPT_RCU, 12,000 threads,
//   fgraph active (a tetragon kprobe_multi link; null bound 0).
struct Host {
  const char* id;
  const char* fixture;
};
constexpr Host kHosts[] = {
    {"mainline", "kasan-6.12-256cpu"},
    {"debian", "preempt-none-6.16-240k"},
    {"ubuntu", "kprobe-multi-6.14"},
};

// A first user's walk, T = c_visit V + c_pass P + c_alloc N_null (c_pass
// 2 us, c_alloc 20 ns), with V and P worked out per case.
double Walk(double c_visit, double visits, double passes, double n_null) {
  return c_visit * visits + 2e-6 * passes + 20e-9 * n_null;
}
// A second user: one pass over every thread, c_visit N + c_pass.
double Pass(double c_visit, double n) { return c_visit * n + 2e-6; }
// Patching: a fprobe kind's typical 100 sites at 1.069 s / 48,712 each; the
// function_graph tracer's 2,000 functions at 1 us.
const double kFprobePatch = 100 * (1.069 / 48712);  // 2.1945 ms
const double kGraphPatch = 2000 * 1e-6;             // 2 ms
constexpr double kNone = 58.7e-9;                   // static NONE/VOLUNTARY
constexpr double kPreemption = 88.7e-9;             // CONFIG_PREEMPTION

// All-NULL walks, B = 32 unless said: P = ceil(N / B), k = P - 1,
// V = B k (k + 1) / 2 + k + N.
//   N = 240,000: P = 7,500, V = 16 * 7,499 * 7,500 + 7,499 + 240,000
//                = 900,127,499
//   N = 240,000, B = 1,024: P = 235, V = 512 * 234 * 235 + 234 + 240,000
//                = 28,395,114
//   N = 100,000: P = 3,125, V = 16 * 3,124 * 3,125 + 3,124 + 100,000
//                = 156,303,124
//   N = 61,000:  P = 1,907, V = 16 * 1,906 * 1,907 + 1,906 + 61,000
//                = 58,218,778
//   N = 61,000, B = 1,024: P = 60, V = 512 * 59 * 60 + 59 + 61,000
//                = 1,873,539
//   N = 120,000: P = 3,750, V = 16 * 3,749 * 3,750 + 3,749 + 120,000
//                = 225,063,749
//   N = 12,000:  P = 375, V = 16 * 374 * 375 + 374 + 12,000 = 2,256,374
// NULL threads at the tail of N_total: F = ceil(N_null / B), k = F - 1,
// V = k (N_total - N_null + 1) + B k (k + 1) / 2 + N_total.
//   240,000 with 3,200 NULL: F = 100, V = 99 * 236,801 + 158,400 + 240,000
//                = 23,841,699
//   61,000 with 1,000 NULL:  F = 32, V = 31 * 60,001 + 15,872 + 61,000
//                = 1,936,903
const double kDebianWalk = Walk(kPreemption, 900127499, 7500, 240000);
const double kMainlineWalk = Walk(kNone, 58218778, 1907, 61000);

struct Expect {
  bool uses_fgraph;
  bool busy;
  uint64_t passes;
  v1::Risk risk;
  double latency;
  // A basis note that must be there ("" none).
  const char* note = "";
  // 0: not checked.
  uint64_t shadow_stack_bytes = 0;
};

struct Case {
  const char* host;
  v1::ProbeKind kind;
  // The what-if in protobuf text format.
  const char* what_if;
  Expect want;
};

constexpr v1::ProbeKind kGraph = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
constexpr v1::ProbeKind kMulti = v1::PROBE_KIND_KPROBE_MULTI;
constexpr v1::ProbeKind kMultiReturn = v1::PROBE_KIND_KPROBE_MULTI_RETURN;

// The notes that say why a fprobe kind uses fgraph or not.
const char kEntryOnlyOff[] = "entry-only fprobes no longer register fgraph";
const char kExitHandler[] = "fprobes with an exit handler register fgraph";
const char kRethook[] = "fprobe is not built on fgraph before 6.14 (rethook)";

const char kOverriddenNote[] =
    "kernel release overridden (what-if): feature rows asked about ";

std::vector<Case> Cases() {
  using v1::RISK_LATENCY;
  using v1::RISK_NONE;
  using v1::RISK_STALL;
  using v1::RISK_WARNING;
  // Risk: a walk that runs without a reschedule point (PREEMPT_NONE) is
  // judged against 20 s: >= 1 a stall, >= 0.5 a warning; otherwise a caller
  // blocked >= 0.1 s is latency, less is none.
  return {
      // ---- debian ------------------------------------------------------
      // As stored: 6.16.12 has fprobe on fgraph (6.14) and entry-only
      // fprobes still on it (off from 6.19, 6.18.32): 79.86 s, whole walk
      // without a reschedule point, 3.99 x 20 s.
      {"debian",
       kMultiReturn,
       "",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      {"debian",
       kMulti,
       "",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // 6.19.0: entry-only fprobes are off fgraph: patching only.
      {"debian",
       kMulti,
       "kernel_release: '6.19.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kEntryOnlyOff}},
      // An exit handler still registers fgraph: the same walk.
      {"debian",
       kMultiReturn,
       "kernel_release: '6.19.0'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch,
        kExitHandler}},
      // The 6.18.y backport: from 6.18.32 on x86-64, not 6.18.31.
      {"debian",
       kMulti,
       "kernel_release: '6.18.32'",
       {false, false, 0, RISK_NONE, kFprobePatch, kEntryOnlyOff}},
      {"debian",
       kMulti,
       "kernel_release: '6.18.31'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // 6.13.0: fprobe is not on fgraph before 6.14 (rethook).
      {"debian",
       kMultiReturn,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kRethook}},
      {"debian",
       kMulti,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"debian",
       kMultiReturn,
       "kernel_release: '6.14.0'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      {"debian",
       kMultiReturn,
       "kernel_release: '6.1.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      // 6.1.0's shadow stacks are 2,048 B (through 6.10): 240,000 of them.
      {"debian",
       kGraph,
       "kernel_release: '6.1.0'",
       {true, false, 7500, RISK_STALL, kDebianWalk + kGraphPatch, "",
        240000ull * 2048}},
      // A Debian ABI string names no upstream version: judged as Debian's
      // kernel without one, rows by 6.12.0 (no fprobe on fgraph), with a
      // note and the confidence lowered.
      {"debian",
       kMultiReturn,
       "kernel_release: '6.12.0-1-amd64'",
       {false, false, 0, RISK_NONE, kFprobePatch,
        "Debian kernel: its backports make the mainline version meaningless; "
        "rows decided by 6.12.0 as if mainline, confidence lowered"}},
      // 100,000 threads: 13.87 s, 0.69 x 20 s.
      {"debian",
       kMultiReturn,
       "threads: 100000",
       {true, false, 3125, RISK_WARNING,
        Walk(kPreemption, 156303124, 3125, 100000) + kFprobePatch}},
      // 3,200 NULL threads at the tail: 2.12 s.
      {"debian",
       kMultiReturn,
       "null_threads: 3200",
       {true, false, 100, RISK_LATENCY,
        Walk(kPreemption, 23841699, 100, 3200) + kFprobePatch}},
      // B = 1,024: 2.53 s.
      {"debian",
       kMultiReturn,
       "batch: 1024",
       {true, false, 235, RISK_LATENCY,
        Walk(kPreemption, 28395114, 235, 240000) + kFprobePatch}},
      // Full preemption with PREEMPT_RCU: the walk is preemptible; the
      // caller still blocks 79.86 s.
      {"debian",
       kMultiReturn,
       "preempt_mode: PREEMPT_MODE_FULL",
       {true, false, 7500, RISK_LATENCY, kDebianWalk + kFprobePatch}},
      // Voluntary: one pass (21.3 ms) between reschedule points.
      {"debian",
       kMultiReturn,
       "preempt_mode: PREEMPT_MODE_VOLUNTARY",
       {true, false, 7500, RISK_LATENCY, kDebianWalk + kFprobePatch}},
      // c_visit 20 ns: 18.02 s, 0.90 x 20 s.
      {"debian",
       kMultiReturn,
       "c_visit_seconds: 20e-9",
       {true, false, 7500, RISK_WARNING,
        Walk(20e-9, 900127499, 7500, 240000) + kFprobePatch}},
      // A budget adds a check; the stall is still a stall.
      {"debian",
       kMultiReturn,
       "latency_budget_seconds: 100",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // fgraph active: a second user (6.11+) walks every thread once.
      {"debian",
       kMultiReturn,
       "fgraph_active: true",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 240000) + kFprobePatch}},
      {"debian",
       kMultiReturn,
       "fgraph_active: false",
       {true, false, 7500, RISK_STALL, kDebianWalk + kFprobePatch}},
      // 6.1.0 allows one fgraph user: a second one is refused (busy).
      {"debian",
       kGraph,
       "kernel_release: '6.1.0' fgraph_active: true",
       {true, true, 0, RISK_NONE, 0}},

      // ---- ubuntu ------------------------------------------------------
      // As stored: fgraph active on 6.14.8, several users: one pass.
      {"ubuntu",
       kMultiReturn,
       "",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      {"ubuntu",
       kMultiReturn,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kRethook}},
      {"ubuntu",
       kMulti,
       "kernel_release: '6.19.0'",
       {false, false, 0, RISK_NONE, kFprobePatch, kEntryOnlyOff}},
      {"ubuntu",
       kMultiReturn,
       "kernel_release: '6.19.0'",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      // 6.1.0: fgraph active and one user allowed: function_graph is busy.
      {"ubuntu",
       kGraph,
       "kernel_release: '6.1.0'",
       {true, true, 0, RISK_NONE, 0, ""}},
      // Ubuntu's ABI string cannot be told from a local build's suffix
      // without the version string: judged by its numbers, 6.8.0.
      {"ubuntu",
       kMultiReturn,
       "kernel_release: '6.8.0-45-generic'",
       {false, false, 0, RISK_NONE, kFprobePatch, kRethook}},
      {"ubuntu",
       kMultiReturn,
       "threads: 400000",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 400000) + kFprobePatch}},
      // fgraph active: the NULL bound does not matter, nor does B.
      {"ubuntu",
       kMultiReturn,
       "null_threads: 5",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      {"ubuntu",
       kMultiReturn,
       "batch: 1024",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      // A second user's pass runs with preemption off on every mode.
      {"ubuntu",
       kMultiReturn,
       "preempt_mode: PREEMPT_MODE_NONE",
       {true, false, 1, RISK_NONE, Pass(kPreemption, 12000) + kFprobePatch}},
      {"ubuntu",
       kMultiReturn,
       "c_visit_seconds: 1e-6",
       {true, false, 1, RISK_NONE, Pass(1e-6, 12000) + kFprobePatch}},
      // 3.26 ms over a 1 ms budget.
      {"ubuntu",
       kMultiReturn,
       "latency_budget_seconds: 0.001",
       {true, false, 1, RISK_LATENCY, Pass(kPreemption, 12000) + kFprobePatch}},
      // Inactive with the stored bound 0 (every thread has a stack): the
      // one pass start_graph_tracing() always makes.
      {"ubuntu",
       kMultiReturn,
       "fgraph_active: false",
       {true, false, 1, RISK_NONE,
        Walk(kPreemption, 12000, 1, 0) + kFprobePatch}},
      // With a thread count the bound is dropped: every thread NULL, 0.2 s.
      {"ubuntu",
       kMultiReturn,
       "fgraph_active: false threads: 12000",
       {true, false, 375, RISK_LATENCY,
        Walk(kPreemption, 2256374, 375, 12000) + kFprobePatch}},

      // ---- mainline ----------------------------------------------------
      // As stored: 6.12.3 has no fprobe on fgraph; function_graph walks
      // 3.42 s, 0.17 x 20 s; PAGE_SIZE shadow stacks (6.11-6.12).
      {"mainline",
       kMultiReturn,
       "",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"mainline",
       kGraph,
       "",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch, "",
        61000ull * 4096}},
      {"mainline",
       kMultiReturn,
       "kernel_release: '6.19.0'",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kFprobePatch,
        kExitHandler}},
      {"mainline",
       kMulti,
       "kernel_release: '6.19.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"mainline",
       kMultiReturn,
       "kernel_release: '6.13.0'",
       {false, false, 0, RISK_NONE, kFprobePatch}},
      {"mainline",
       kGraph,
       "kernel_release: '6.1.0'",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch, "",
        61000ull * 2048}},
      // 120,000 threads: 13.22 s, 0.66 x 20 s.
      {"mainline",
       kGraph,
       "threads: 120000",
       {true, false, 3750, RISK_WARNING,
        Walk(kNone, 225063749, 3750, 120000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "null_threads: 1000",
       {true, false, 32, RISK_LATENCY,
        Walk(kNone, 1936903, 32, 1000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "batch: 1024",
       {true, false, 60, RISK_LATENCY,
        Walk(kNone, 1873539, 60, 61000) + kGraphPatch}},
      // Full preemption on this static build: the mode says CONFIG_PREEMPTION
      // (88.7 ns); without PREEMPT_RCU each pass runs with preemption off,
      // 3.6 ms: latency only.
      {"mainline",
       kGraph,
       "preempt_mode: PREEMPT_MODE_FULL",
       {true, false, 1907, RISK_LATENCY,
        Walk(kPreemption, 58218778, 1907, 61000) + kGraphPatch}},
      // c_visit 200 ns: 11.65 s, 0.58 x 20 s.
      {"mainline",
       kGraph,
       "c_visit_seconds: 200e-9",
       {true, false, 1907, RISK_WARNING,
        Walk(200e-9, 58218778, 1907, 61000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "latency_budget_seconds: 1",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch}},
      {"mainline",
       kGraph,
       "fgraph_active: true",
       {true, false, 1, RISK_NONE, Pass(kNone, 61000) + kGraphPatch}},
      {"mainline",
       kGraph,
       "fgraph_active: false",
       {true, false, 1907, RISK_LATENCY, kMainlineWalk + kGraphPatch}},
  };
}

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
