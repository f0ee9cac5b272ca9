// End to end: canary calibrations sent to the real server
// (TelemetryIngest.SubmitCalibration) become their hardware class's
// constants, which the server then uses for a host of that class without a
// calibration of its own (PredictAttach, its basis, /metrics), while a host
// with its own keeps it; FleetQuery.Accuracy and tracehealthctl accuracy
// list the class.
//
// Class: "QEMU TCG CPU version 2.5+ / 6.1" (the preempt-voluntary-dynamic-
// 6.1-128k fixture: 128,000 threads, none with a shadow stack, B = 32).
#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/agent/fixture_util.h"
#include "tests/server/server_process.h"
#include "tests/util/class_canary.h"
#include "tests/util/eventually.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr char kFixture[] = "preempt-voluntary-dynamic-6.1-128k";
constexpr char kClass[] = "QEMU TCG CPU version 2.5+ / 6.1";

std::unique_ptr<Subprocess> StartAgent(const std::string& root,
                                       const std::string& state,
                                       const std::string& id,
                                       const std::string& server,
                                       const std::string& log) {
  auto p = Subprocess::Start(
      {Runfile("agent/tracehealth-agent"), "--root=" + root,
       "--state_dir=" + state, "--server=" + server, "--host_id=" + id,
       "--interval=1s", "--local_socket=none", "--kernel_log=false"},
      log);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? std::move(*p) : nullptr;
}

const v1::BasisConstant* Constant(const v1::AttachPrediction& p,
                                  const std::string& name) {
  for (const v1::BasisConstant& c : p.basis().constants()) {
    if (c.name() == name) return &c;
  }
  return nullptr;
}

// `host`'s function_graph latency on /metrics, -1 when missing.
double ExposedLatency(const std::string& metrics_addr,
                      const std::string& host) {
  absl::StatusOr<std::string> body = HttpGet(metrics_addr, "/metrics");
  EXPECT_TRUE(body.ok()) << body.status();
  return FunctionGraphLatencyOnMetrics(body.value_or(""), host);
}

TEST(CalibrationEndToEndTest, ClassConstantsPriceHostsWithoutTheirOwn) {
  const std::string dir = NewTempDir("calibration-e2e");
  std::filesystem::create_directories(dir + "/server");
  absl::StatusOr<ServerProcess> sp = StartServer(dir + "/server");
  ASSERT_TRUE(sp.ok()) << sp.status();
  auto channel =
      grpc::CreateChannel(sp->grpc_addr, grpc::InsecureChannelCredentials());
  auto ingest = v1::TelemetryIngest::NewStub(channel);
  auto query = v1::FleetQuery::NewStub(channel);

  // Three canaries: c_visit 300, 500, 400 ns (median 400 ns), fixed 1, 3,
  // 2 ms (median 2 ms).
  const double visits[] = {300e-9, 500e-9, 400e-9};
  const double fixed[] = {1e-3, 3e-3, 2e-3};
  v1::SubmitCalibrationResponse r;
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext ctx;
    grpc::Status s = ingest->SubmitCalibration(
        &ctx, Canary("canary-" + std::to_string(i), visits[i], fixed[i]), &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(r.hardware_class(), kClass);
  EXPECT_EQ(r.class_calibrations(), 3u);
  EXPECT_DOUBLE_EQ(r.class_c_visit_seconds(), 400e-9);
  EXPECT_DOUBLE_EQ(r.class_fixed_seconds(), 2e-3);
  {
    grpc::ClientContext ctx;
    grpc::Status s =
        ingest->SubmitCalibration(&ctx, Canary("bad", -1e-9, 0), &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message().rfind("c_visit_seconds: ", 0), 0u)
        << s.error_message();
  }

  // guest-1 has no calibration of its own; guest-2 has (120 ns).
  const std::string root1 = CopyFixture(kFixture);
  const std::string root2 = CopyFixture(kFixture);
  std::filesystem::create_directories(dir + "/guest-2");
  ASSERT_TRUE(WriteFile(dir + "/guest-2/calibration.json",
                        "{\"c_visit_seconds\": 1.2e-07, \"fixed_seconds\": 0, "
                        "\"kernel_release\": \"6.1.0-28-amd64\", "
                        "\"cpu_model\": \"QEMU TCG CPU version 2.5+\", "
                        "\"measured_at\": \"2026-12-01T15:40:00Z\"}\n")
                  .ok());
  auto a1 = StartAgent(root1, dir + "/guest-1", "guest-1", sp->grpc_addr,
                       dir + "/guest-1.log");
  auto a2 = StartAgent(root2, dir + "/guest-2", "guest-2", sp->grpc_addr,
                       dir + "/guest-2.log");
  std::optional<v1::AttachPrediction> p1, p2;
  ASSERT_TRUE(Eventually(
      [&] {
        p1 = PredictFunctionGraph(*query, "guest-1");
        p2 = PredictFunctionGraph(*query, "guest-2");
        return p1.has_value() && p2.has_value();
      },
      absl::Seconds(60)))
      << ReadFile(dir + "/guest-1.log").value_or("");

  // 128,000 threads without a stack, B = 32: 4000 passes, 3999 stop early:
  // V = 3999 + 32 * 3999 * 4000 / 2 + 128,000 = 256,067,999. At the class's
  // 400 ns: 102.4271996 + 2 us * 4000 + 20 ns * 128,000 = 102.4377596 s
  // (the seed 88.7 ns would give 22.7 s).
  ASSERT_EQ(p1->passes(), 4000u);
  EXPECT_DOUBLE_EQ(p1->visits(), 256067999);
  EXPECT_NEAR(p1->walk_seconds(), 102.4377596, 1e-6);
  EXPECT_NEAR(p1->latency_seconds(), 102.4377596 + 2e-3 + p1->patch_seconds(),
              1e-6);
  const v1::BasisConstant* c = Constant(*p1, "c_visit");
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->value(), 400e-9);
  EXPECT_EQ(c->origin(), "3 canaries of class QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ(c->anchor(), v1::ANCHOR_CALIBRATED);
  // guest-2's own 120 ns: 120e-9 * V = 30.72815988 s + 0.01056 s.
  EXPECT_NEAR(p2->walk_seconds(), 30.73871988, 1e-6);
  c = Constant(*p2, "c_visit");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->origin(), "this host's calibration 2026-12-01T15:40:00Z");

  // /metrics carries the class-priced latency (from the index's record).
  EXPECT_NEAR(ExposedLatency(sp->metrics_addr, "guest-1"),
              p1->latency_seconds(), 1e-3);

  // Accuracy: the class, its canaries, spread (500 - 300) / 400 = 50 %, and
  // its two hosts.
  grpc::ClientContext actx;
  v1::AccuracyResponse acc;
  ASSERT_TRUE(query->Accuracy(&actx, v1::AccuracyRequest(), &acc).ok());
  ASSERT_EQ(acc.classes_size(), 1);
  const v1::ClassAccuracy& cls = acc.classes(0);
  EXPECT_EQ(cls.hardware_class(), kClass);
  EXPECT_EQ(cls.canaries(), 3u);
  EXPECT_EQ(cls.calibrations(), 3u);
  EXPECT_DOUBLE_EQ(cls.c_visit_median_seconds(), 400e-9);
  EXPECT_DOUBLE_EQ(cls.c_visit_min_seconds(), 300e-9);
  EXPECT_DOUBLE_EQ(cls.c_visit_max_seconds(), 500e-9);
  EXPECT_DOUBLE_EQ(cls.c_visit_spread(), 0.5);
  EXPECT_EQ(cls.hosts(), 2u);
  EXPECT_EQ(cls.events(), 0u);

  const std::string log = dir + "/ctl.out";
  auto ctl = Subprocess::Start({Runfile("tools/tracehealthctl/tracehealthctl"),
                                "--server=" + sp->grpc_addr, "accuracy"},
                               log);
  ASSERT_TRUE(ctl.ok()) << ctl.status();
  absl::StatusOr<int> rc = (*ctl)->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok());
  const std::string out = ReadFile(log).value_or("");
  EXPECT_EQ(*rc, 0) << out;
  for (const char* want : {kClass, "3 (3 calibrations)", "400.0", "300.0-500.0",
                           "50%", "2.0 ms", "1 class(es)"}) {
    EXPECT_TRUE(absl::StrContains(out, want)) << want << "\n" << out;
  }

  // Two more canaries once no agent reports: 300..700 ns, median 500 ns;
  // fixed 1..5 ms, median 3 ms. PredictAttach prices guest-1 with them at
  // once: 500e-9 * 256,067,999 = 128.0339995 s, + 8 ms + 2.56 ms =
  // 128.0445595 s. Restarted, the server loads the classes before the index,
  // so the record /metrics reads is priced with them from the start too.
  // guest-2 keeps its own 120 ns.
  for (auto* a : {a1.get(), a2.get()}) {
    ASSERT_TRUE(a->Signal(SIGTERM).ok());
    ASSERT_TRUE(a->Wait(absl::Seconds(30)).ok());
  }
  for (int i = 3; i < 5; ++i) {
    grpc::ClientContext ctx;
    grpc::Status s = ingest->SubmitCalibration(
        &ctx,
        Canary("canary-" + std::to_string(i), (i + 3) * 100e-9, (i + 1) * 1e-3),
        &r);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(r.class_calibrations(), 5u);
  EXPECT_DOUBLE_EQ(r.class_c_visit_seconds(), 500e-9);
  p1 = PredictFunctionGraph(*query, "guest-1");
  ASSERT_TRUE(p1.has_value());
  EXPECT_NEAR(p1->walk_seconds(), 128.0445595, 1e-6);
  ASSERT_TRUE(sp->process->Signal(SIGTERM).ok());
  ASSERT_TRUE(sp->process->Wait(absl::Seconds(30)).ok());
  sp = StartServer(dir + "/server");
  ASSERT_TRUE(sp.ok()) << sp.status();
  auto query2 = v1::FleetQuery::NewStub(
      grpc::CreateChannel(sp->grpc_addr, grpc::InsecureChannelCredentials()));
  p1 = PredictFunctionGraph(*query2, "guest-1");
  p2 = PredictFunctionGraph(*query2, "guest-2");
  ASSERT_TRUE(p1.has_value() && p2.has_value());
  EXPECT_NEAR(p1->walk_seconds(), 128.0445595, 1e-6);
  c = Constant(*p1, "c_visit");
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->value(), 500e-9);
  EXPECT_EQ(c->origin(), "5 canaries of class QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_NEAR(p2->walk_seconds(), 30.73871988, 1e-6);
  EXPECT_NEAR(ExposedLatency(sp->metrics_addr, "guest-1"),
              p1->latency_seconds(), 1e-3);
  const std::string slog = ReadFile(sp->log_path).value_or("");
  EXPECT_TRUE(absl::StrContains(slog, "1 priced by their hardware class"))
      << slog;
}

}  // namespace
}  // namespace tracehealth::testing
