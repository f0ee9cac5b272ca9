// The agent's Gate service (proto/tracehealth/v1/gate.proto): answers a
// check from a fresh read of the moving inputs (fresh_inputs.h) over the
// snapshot of the agent's last cycle, which the agent publishes here after
// each cycle. Keeps the host's thread history (thread_history.h) from
// cycles and checks, and available_filter_functions (function_list.h).
//
// Errors: INVALID_ARGUMENT naming the field of a malformed request;
// UNAVAILABLE until the first snapshot is published.
//
// Thread safety: thread-safe; Check runs on gRPC's threads while the
// agent's loop publishes. `fs` and `options.models.features` are not owned and
// must outlive the service.
#ifndef TRACEHEALTH_AGENT_GATE_GATE_SERVICE_H_
#define TRACEHEALTH_AGENT_GATE_GATE_SERVICE_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/gate/function_list.h"
#include "agent/gate/thread_history.h"
#include "common/models/model_options.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/gate.grpc.pb.h"

namespace tracehealth::agent {

struct GateServiceOptions {
  // How this host is priced: the options its reports use
  // (agent/calibrate/host_pricing.h HostModelOptions: its calibration and
  // feature table), so the gate answers as they do. Their feature table
  // also reads the moving inputs.
  ModelOptions models;
  // CheckResponse.answered_by, e.g. "agent unix:/var/lib/.../gate.sock".
  std::string answered_by = "agent";
  std::function<absl::Time()> clock = [] { return absl::Now(); };
  ThreadHistoryOptions history;
};

class GateService final : public v1::Gate::Service {
 public:
  GateService(const HostFs* fs, GateServiceOptions options);

  // The snapshot of a finished cycle, taken now. Also reads
  // available_filter_functions when it is not cached or its count changed.
  void Publish(const v1::HostSnapshot& snapshot) ABSL_LOCKS_EXCLUDED(mu_);

  // One check (what Check serves).
  absl::StatusOr<v1::CheckResponse> Answer(const v1::CheckRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);

  grpc::Status Check(grpc::ServerContext* context,
                     const v1::CheckRequest* request,
                     v1::CheckResponse* response) override;

 private:
  const HostFs* fs_;
  const GateServiceOptions options_;
  ThreadHistory history_;
  FunctionCache functions_;
  absl::Mutex mu_;
  std::optional<v1::HostSnapshot> last_ ABSL_GUARDED_BY(mu_);
  absl::Time last_at_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_GATE_GATE_SERVICE_H_
