#include "tests/util/class_canary.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "grpcpp/grpcpp.h"

namespace tracehealth::testing {

v1::Calibration Canary(const std::string& host, double c_visit, double fixed) {
  v1::Calibration c;
  c.set_host_id(host);
  c.set_c_visit_seconds(c_visit);
  c.set_fixed_seconds(fixed);
  c.set_threads(20000);
  c.set_cpu_model("QEMU TCG CPU version 2.5+");
  c.set_kernel_release("6.1.0-28-amd64");
  c.mutable_measured_at()->set_seconds(1796139600);
  return c;
}

std::optional<v1::AttachPrediction> PredictFunctionGraph(
    v1::FleetQuery::Stub& stub, const std::string& host) {
  grpc::ClientContext ctx;
  v1::PredictAttachRequest req;
  req.mutable_hosts()->add_host_ids(host);
  req.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  v1::PredictAttachResponse resp;
  if (!stub.PredictAttach(&ctx, req, &resp).ok() || resp.answers_size() != 1 ||
      !resp.answers(0).has_prediction()) {
    return std::nullopt;
  }
  return resp.answers(0).prediction();
}

double FunctionGraphLatencyOnMetrics(const std::string& body,
                                     const std::string& host) {
  double exposed = -1;
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (absl::ConsumePrefix(&line, "tracehealth_attach_latency_seconds{") &&
        absl::StrContains(line, "host=\"" + host + "\"") &&
        absl::StrContains(line, "probe_kind=\"function_graph_tracer\"") &&
        !absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &exposed)) {
      return -1;
    }
  }
  return exposed;
}

}  // namespace tracehealth::testing
