#include "tools/tracehealthctl/model_command.h"

#include <algorithm>

#include "common/models/evaluate.h"
#include "tools/tracehealthctl/model_print.h"
#include "tools/tracehealthctl/model_request.h"

namespace tracehealth {
namespace {

constexpr char kUsage[] =
    "usage: tracehealthctl model fgraph|stackdepot|vmap [flags] [--json]\n"
    "  fgraph:     --threads N [--null_threads N] [--batch B] [--preempt MODE] "
    "[--kernel REL] [--probe KIND] [--sites N] [--c_visit_ns NS] "
    "[--watchdog_thresh S] [--rcu_stall_timeout S] [--latency_budget S] "
    "[--fgraph_active true|false]\n"
    "  stackdepot: --pools N [--max_pools N] [--frames N] [--persistent_bytes "
    "N] "
    "[--persistent_count N] [--history T:P,...] [--show_stacks FILE]\n"
    "  vmap:       --cpus N [--kernel REL] [--unpurged_areas N] "
    "[--shadow_page_areas N] [--invlpgb true|false] [--preempt MODE]\n";

// Inputs the flags gave are shown as "given" (INPUT_SOURCE_OVERRIDDEN).
void MarkOverridden(const std::set<std::string>& given, v1::Basis* basis) {
  for (v1::BasisInput& input : *basis->mutable_inputs()) {
    if (given.count(input.name()) > 0)
      input.set_source(v1::INPUT_SOURCE_OVERRIDDEN);
  }
}

}  // namespace

int RunModelCommand(const std::vector<std::string>& args, bool json,
                    const ModelFlags& flags, std::ostream& out,
                    std::ostream& err) {
  if (args.size() != 1) {
    err << (args.empty() ? "model: which model?\n"
                         : "model: one model at a time\n")
        << kUsage;
    return 2;
  }
  const std::string& model = args[0];
  absl::StatusOr<ModelRequest> request = BuildModelRequest(model, flags);
  if (!request.ok()) {
    err << "model: " << request.status().message() << "\n" << kUsage;
    return 2;
  }
  ModelRequest& r = *request;

  if (model == "fgraph") {
    v1::Predictions predictions;
    if (r.probe) {
      *predictions.add_attach() =
          EvaluateAttach(r.snapshot, *r.probe, r.options);
    } else {
      for (int k = v1::PROBE_KIND_FUNCTION_GRAPH_TRACER;
           k <= v1::PROBE_KIND_FENTRY_FEXIT; ++k) {
        *predictions.add_attach() = EvaluateAttach(
            r.snapshot, static_cast<v1::ProbeKind>(k), r.options);
      }
    }
    v1::Risk worst = v1::RISK_UNKNOWN;
    for (v1::AttachPrediction& a : *predictions.mutable_attach()) {
      MarkOverridden(r.given, a.mutable_basis());
      worst = std::max(worst, a.risk());
    }
    predictions.set_worst_risk(worst);
    if (json) return PrintJson(predictions, out, err) ? 0 : 1;
    for (const v1::AttachPrediction& a : predictions.attach())
      PrintAttach(a, out);
    return 0;
  }
  if (model == "stackdepot") {
    v1::StackDepotPrediction p = EvaluateStackDepot(r.snapshot, r.options);
    MarkOverridden(r.given, p.mutable_basis());
    if (json) return PrintJson(p, out, err) ? 0 : 1;
    PrintStackDepot(p, out);
    return 0;
  }
  v1::VmapPurgePrediction p = EvaluateVmapPurge(r.snapshot, r.options);
  MarkOverridden(r.given, p.mutable_basis());
  if (json) return PrintJson(p, out, err) ? 0 : 1;
  PrintVmap(p, out);
  return 0;
}

}  // namespace tracehealth
