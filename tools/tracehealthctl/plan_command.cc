#include "tools/tracehealthctl/plan_command.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/enum_names.h"
#include "common/escape.h"
#include "common/format.h"
#include "tools/tracehealthctl/table.h"
#include "tools/tracehealthctl/what_if_flags.h"

namespace tracehealth {

using server::Table;

const char* PlanClassName(v1::PlanClass c) {
  switch (c) {
    case v1::PLAN_CLASS_SAFE:
      return "safe";
    case v1::PLAN_CLASS_OVER_BUDGET:
      return "over budget";
    case v1::PLAN_CLASS_LOCKUP_RISK:
      return "lockup risk";
    case v1::PLAN_CLASS_UNKNOWN:
      return "unknown";
    default:
      return "-";
  }
}

absl::Status PlanRequestFromFlags(const PlanFlags& plan,
                                  const ModelFlags& model,
                                  v1::PredictAttachRequest* req) {
  const absl::Duration max = plan.max_latency;
  if (max <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "plan: --max_latency is required and must be > 0 (e.g. 2s)");
  }
  if (plan.wave_hosts < 0) {
    return absl::InvalidArgumentError("plan: --wave_hosts must be >= 0");
  }
  const int64_t ns = absl::ToInt64Nanoseconds(max);
  req->mutable_plan()->mutable_max_latency()->set_seconds(ns / 1000000000);
  req->mutable_plan()->mutable_max_latency()->set_nanos(
      static_cast<int32_t>(ns % 1000000000));
  req->mutable_plan()->set_wave_host_ids(
      static_cast<uint32_t>(plan.wave_hosts));
  absl::StatusOr<v1::WhatIf> what_if = WhatIfFromFlags(model);
  if (!what_if.ok()) return what_if.status();
  *req->mutable_what_if() = *std::move(what_if);
  return absl::OkStatus();
}

void PrintPlan(const v1::PredictAttachRequest& req,
               const v1::PredictAttachResponse& resp, std::ostream& out) {
  const v1::RolloutPlan& p = resp.plan();
  const double budget = static_cast<double>(p.max_latency().seconds()) +
                        p.max_latency().nanos() * 1e-9;
  out << absl::AsciiStrToLower(absl::StripPrefix(
             v1::ProbeKind_Name(req.probe_kind()), "PROBE_KIND_"))
      << " on " << resp.matched_hosts() << " host(s), at most "
      << FormatSeconds(budget) << " an attach: " << p.safe() << " safe, "
      << p.over_budget() << " over budget, " << p.lockup_risk()
      << " lockup risk, " << p.unknown() << " unknown\n\n";
  Table waves({"WAVE", "CLASS", "HOSTS", "UP TO", "ACTION"});
  for (const v1::PlanWave& w : p.waves()) {
    waves.AddRow({absl::StrCat(w.number()), PlanClassName(w.plan_class()),
                  absl::StrCat(w.hosts()),
                  FormatSeconds(w.max_latency_seconds()), w.action()});
  }
  waves.Print(out);
  for (const v1::PlanWave& w : p.waves()) {
    if (w.host_ids_size() == 0) continue;
    out << "wave " << w.number() << ": "
        << EscapeText(absl::StrJoin(w.host_ids(), ","));
    if (static_cast<uint32_t>(w.host_ids_size()) < w.hosts()) {
      out << " (" << w.host_ids_size() << " of " << w.hosts() << ")";
    }
    out << "\n";
  }
  if (resp.answers_size() > 0) {
    out << "\nworst hosts:\n";
    Table worst({"HOST", "CLASS", "RISK", "LATENCY", "RECOMMENDATION"});
    for (const v1::HostAttachAnswer& a : resp.answers()) {
      worst.AddRow({a.host_id(), PlanClassName(a.plan_class()),
                    RiskName(a.prediction().risk()),
                    FormatSeconds(a.prediction().latency_seconds()),
                    a.recommendation()});
    }
    worst.Print(out);
  }
  if (resp.unknown_hosts_size() > 0) {
    std::vector<std::string> unknown;
    for (const std::string& id : resp.unknown_hosts())
      unknown.push_back(EscapeText(id));
    out << "unknown: " << absl::StrJoin(unknown, ", ") << "\n";
  }
}

}  // namespace tracehealth
