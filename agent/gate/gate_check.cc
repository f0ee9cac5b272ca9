#include "agent/gate/gate_check.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/gate/ftrace_filter.h"
#include "common/enum_names.h"
#include "common/models/explain.h"
#include "common/models/mitigation/attach_verdict.h"
#include "common/models/mitigation/mitigations.h"

namespace tracehealth::agent {
namespace {

double Seconds(const google::protobuf::Duration& d) {
  return static_cast<double>(d.seconds()) + d.nanos() * 1e-9;
}

// The sites the request names: a count into `options.sites`, or why a
// filter could not give one (`*unknown`, for an UNKNOWN verdict).
void ResolveSites(const v1::CheckRequest& request,
                  const v1::HostSnapshot& snapshot, FunctionCache& functions,
                  ModelOptions* options, v1::CheckResponse* out,
                  std::string* unknown) {
  switch (request.sites_case()) {
    case v1::CheckRequest::kFunctions:
      options->sites = request.functions();
      out->set_sites_source("functions");
      return;
    case v1::CheckRequest::kFilter:
      break;
    default:
      out->set_sites_source("default");
      return;
  }
  // Validated before: it parses.
  const FtraceFilter filter = *FtraceFilter::Parse(request.filter());
  const v1::FgraphState& fg = snapshot.fgraph();
  absl::StatusOr<FunctionCache::Counted> counted =
      fg.has_tracefs_path()
          ? functions.Count(
                fg.tracefs_path(),
                fg.has_available_filter_functions()
                    ? std::optional<uint64_t>(fg.available_filter_functions())
                    : std::nullopt,
                filter)
          : absl::StatusOr<FunctionCache::Counted>(
                absl::NotFoundError("tracefs is not mounted"));
  const std::string quoted = absl::StrCat("filter '", filter.text(), "'");
  out->set_sites_source(quoted);
  if (!counted.ok()) {
    *unknown = absl::StrCat(quoted,
                            " cannot be counted: ", counted.status().message());
    return;
  }
  out->set_sites_source(absl::StrCat(quoted, ": ", counted->matches, " of ",
                                     counted->functions, " functions"));
  if (counted->matches == 0) {
    *unknown = absl::StrCat(quoted, " selects none of the ", counted->functions,
                            " functions in available_filter_functions");
    return;
  }
  options->sites = counted->matches;
}

}  // namespace

absl::Status ValidateCheckRequest(const v1::CheckRequest& request) {
  if (request.probe_kind() == v1::PROBE_KIND_UNSPECIFIED ||
      !v1::ProbeKind_IsValid(request.probe_kind())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "probe_kind: required, one of ", absl::StrJoin(ProbeKindFlags(), ", "),
        " (got ", request.probe_kind(), ")"));
  }
  if (request.sites_case() == v1::CheckRequest::kFunctions &&
      request.functions() == 0) {
    return absl::InvalidArgumentError("functions: must be at least 1");
  }
  if (request.sites_case() == v1::CheckRequest::kFilter) {
    absl::StatusOr<FtraceFilter> f = FtraceFilter::Parse(request.filter());
    if (!f.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("filter: ", f.status().message()));
    }
  }
  if (!request.has_max_latency()) {
    return absl::InvalidArgumentError("max_latency: required");
  }
  const google::protobuf::Duration& d = request.max_latency();
  if (d.nanos() < 0 || d.nanos() > 999999999 || d.seconds() < 0 ||
      (d.seconds() == 0 && d.nanos() == 0)) {
    return absl::InvalidArgumentError(
        "max_latency: must be positive (seconds >= 0, nanos 0..999999999)");
  }
  if (Seconds(d) > kMaxLatencyLimitSeconds) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_latency: at most ", kMaxLatencyLimitSeconds, " s"));
  }
  return absl::OkStatus();
}

v1::CheckResponse EvaluateCheck(const v1::CheckRequest& request,
                                const v1::HostSnapshot& snapshot,
                                const ModelOptions& base,
                                FunctionCache& functions,
                                const std::optional<v1::ThreadTrend>& trend) {
  v1::CheckResponse out;
  const v1::ProbeKind kind = request.probe_kind();
  const double budget = Seconds(request.max_latency());
  out.set_max_latency_seconds(budget);
  ModelOptions options = base;
  std::string sites_unknown;
  ResolveSites(request, snapshot, functions, &options, &out, &sites_unknown);

  AttachAssessment a = AssessAttach(snapshot, kind, budget, options);
  if (!sites_unknown.empty()) {
    a.verdict = v1::ATTACH_VERDICT_UNKNOWN;
    a.reason =
        absl::StrCat("unknown: ", ProbeKindFlag(kind), ": ", sites_unknown);
  }
  out.set_verdict(a.verdict);
  out.set_reason(a.reason);
  out.set_sites(a.prediction.patch_sites());
  for (v1::Mitigation& m :
       Mitigate(snapshot, kind, budget, options, a, trend)) {
    *out.add_mitigations() = std::move(m);
  }
  ModelOptions explain = options;
  explain.latency_budget_seconds = budget;
  *out.mutable_prediction() = std::move(a.prediction);
  ExplainAttach(snapshot, explain, out.mutable_prediction());
  if (trend.has_value()) *out.mutable_trend() = *trend;
  *out.mutable_unknown() = snapshot.unknown();
  return out;
}

}  // namespace tracehealth::agent
