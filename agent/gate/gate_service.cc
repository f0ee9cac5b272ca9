#include "agent/gate/gate_service.h"

#include <utility>

#include "agent/gate/fresh_inputs.h"
#include "agent/gate/gate_check.h"
#include "common/proto_time.h"

namespace tracehealth::agent {

GateService::GateService(const HostFs* fs, GateServiceOptions options)
    : fs_(fs),
      options_(std::move(options)),
      history_(options_.history),
      functions_(fs) {}

void GateService::Publish(const v1::HostSnapshot& snapshot) {
  const absl::Time now = options_.clock();
  if (snapshot.threads().has_total()) {
    history_.Add(now, snapshot.threads().total());
  }
  // Read available_filter_functions here, on the agent's loop, rather than
  // in the first check that names a filter (tens of milliseconds). A
  // failure is the check's to report.
  const v1::FgraphState& fg = snapshot.fgraph();
  if (fg.has_tracefs_path()) {
    functions_
        .Warm(fg.tracefs_path(),
              fg.has_available_filter_functions()
                  ? std::optional<uint64_t>(fg.available_filter_functions())
                  : std::nullopt)
        .IgnoreError();
  }
  absl::MutexLock lock(&mu_);
  last_ = snapshot;
  last_at_ = now;
}

absl::StatusOr<v1::CheckResponse> GateService::Answer(
    const v1::CheckRequest& request) {
  absl::Status valid = ValidateCheckRequest(request);
  if (!valid.ok()) return valid;
  v1::HostSnapshot last;
  absl::Time last_at;
  {
    absl::MutexLock lock(&mu_);
    if (!last_.has_value()) {
      return absl::UnavailableError(
          "the agent has not finished its first collection cycle yet");
    }
    last = *last_;
    last_at = last_at_;
  }
  const absl::Time read_at = options_.clock();
  const v1::HostSnapshot fresh =
      RefreshMovingInputs(*fs_, *options_.models.features, last);
  if (fresh.threads().has_total()) {
    history_.Add(read_at, fresh.threads().total());
  }
  v1::CheckResponse out = EvaluateCheck(request, fresh, options_.models,
                                        functions_, history_.Trend(read_at));
  out.set_answered_by(options_.answered_by);
  *out.mutable_read_at() = ToProto(read_at);
  *out.mutable_snapshot_at() = ToProto(last_at);
  return out;
}

grpc::Status GateService::Check(grpc::ServerContext*,
                                const v1::CheckRequest* request,
                                v1::CheckResponse* response) {
  absl::StatusOr<v1::CheckResponse> out = Answer(*request);
  if (!out.ok()) {
    return grpc::Status(static_cast<grpc::StatusCode>(out.status().code()),
                        std::string(out.status().message()));
  }
  *response = *std::move(out);
  return grpc::Status::OK;
}

}  // namespace tracehealth::agent
