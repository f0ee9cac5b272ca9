#include "agent/calibrate/calibrate_command.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/calibrate/calibration_store.h"
#include "agent/calibrate/calibrator.h"
#include "agent/calibrate/host_pricing.h"
#include "agent/calibrate/memory_walk.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"

namespace tracehealth::agent {
namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Sends `c` to the first of `servers` that takes it; the server's answer
// (the class's constants now) goes to `err`.
absl::Status Submit(const CalibrateCommand& cmd, const v1::Calibration& c,
                    std::ostream& err) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
      ClientCredentials(cmd.tls);
  if (!creds.ok()) return creds.status();
  grpc::ChannelArguments args;
  ApplyServerName(cmd.tls, &args);
  absl::Status last;
  for (absl::string_view address :
       absl::StrSplit(cmd.server, ',', absl::SkipEmpty())) {
    auto channel =
        grpc::CreateCustomChannel(std::string(address), *creds, args);
    auto stub = v1::TelemetryIngest::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::SubmitCalibrationResponse response;
    grpc::Status s = stub->SubmitCalibration(&ctx, c, &response);
    if (s.ok()) {
      err << absl::StrFormat(
          "tracehealth-agent: sent to %s: class %s now has %d "
          "calibrations, median c_visit %.1f ns, fixed %.1f us\n",
          address, response.hardware_class(), response.class_calibrations(),
          response.class_c_visit_seconds() * 1e9,
          response.class_fixed_seconds() * 1e6);
      return absl::OkStatus();
    }
    last = absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        absl::StrCat(address, ": ", s.error_message()));
    // The server judged the calibration: another replica would too.
    if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
        s.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      break;
    }
  }
  return last;
}

}  // namespace

std::string CalibrationLine(const v1::Calibration& c) {
  std::vector<std::string> points;
  for (const v1::CalibrationPoint& p : c.points()) {
    points.push_back(absl::StrFormat("%d:%.3f/%.3f", p.threads(),
                                     p.first_enable_seconds() * 1e3,
                                     p.second_enable_seconds() * 1e3));
  }
  std::vector<std::string> walk;
  for (const v1::MemoryWalkPoint& p : c.memory_walk()) {
    walk.push_back(absl::StrFormat("%d:%.1f", p.tasks(), p.ns_per_task()));
  }
  return absl::StrFormat(
      "calibrated: c_visit=%.1f ns fixed=%.1f us c_pass=%.1f us (%s) "
      "threads=%d first_enable=%.3f ms second_enable=%.3f ms "
      "points_ms=%s repetitions=%d memory_walk_ns=%s",
      c.c_visit_seconds() * 1e9, c.fixed_seconds() * 1e6,
      c.c_pass_seconds() * 1e6, c.c_pass_fitted() ? "fitted" : "assumed",
      c.threads(), c.first_enable_seconds() * 1e3,
      c.second_enable_seconds() * 1e3, absl::StrJoin(points, ","),
      c.repetitions(), walk.empty() ? "none" : absl::StrJoin(walk, ","));
}

int RunCalibrate(const HostFs& fs, const CalibrateCommand& cmd,
                 absl::Notification* stop, std::ostream& out,
                 std::ostream& err) {
  CalibratorOptions options;
  options.state_dir = cmd.state_dir;
  options.host_id = cmd.host_id;
  options.budget_seconds = absl::ToDoubleSeconds(cmd.budget);
  options.threads = cmd.threads;
  options.points = cmd.points;
  options.repeats = cmd.repeats;
  options.hold_for_test = cmd.hold_for_test;
  options.log = [&err](const std::string& line) {
    err << "tracehealth-agent: " << line << "\n";
  };
  options.memory_walk = [](uint64_t max_tasks) {
    MemoryWalkOptions walk;
    walk.max_tasks = max_tasks;
    return WalkMemory(walk);
  };
  std::string warning;
  options.models = HostModelOptions(
      LoadHostPricing(fs, cmd.state_dir, cmd.features, &warning));
  if (!warning.empty())
    err << "tracehealth-agent: warning: " << warning << "\n";
  Calibrator calibrator(
      &fs, options, SteadyNanos, [] { return absl::Now(); }, stop);
  const CalibrationOutcome outcome = calibrator.Run();
  if (outcome.kind == CalibrationOutcome::kRefused) {
    out << "refused: " << outcome.reason << "\n";
    return 1;
  }
  if (outcome.kind == CalibrationOutcome::kError) {
    out << "error: " << outcome.reason << "\n";
    return 2;
  }
  const v1::Calibration& c = outcome.calibration;
  out << (cmd.format == "json" ? CalibrationJson(c) : CalibrationLine(c))
      << "\n";
  out.flush();
  int rc = 0;
  absl::Status saved = SaveCalibration(cmd.state_dir, c);
  if (!saved.ok()) {
    err << "tracehealth-agent: storing the calibration: " << saved.message()
        << "\n";
    rc = 2;
  }
  if (!cmd.server.empty()) {
    absl::Status sent = Submit(cmd, c, err);
    if (!sent.ok()) {
      err << "tracehealth-agent: --server: SubmitCalibration: "
          << sent.message() << "\n";
      rc = 2;
    }
  }
  return rc;
}

}  // namespace tracehealth::agent
