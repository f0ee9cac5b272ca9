#include "tools/tracehealthctl/fleet_commands.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/enum_names.h"
#include "common/escape.h"
#include "common/format.h"
#include "common/grpc_code_name.h"
#include "common/proto_json.h"
#include "tools/tracehealthctl/accuracy_table.h"
#include "tools/tracehealthctl/events_table.h"
#include "tools/tracehealthctl/model_request.h"
#include "tools/tracehealthctl/plan_command.h"
#include "tools/tracehealthctl/table.h"
#include "tools/tracehealthctl/what_if_flags.h"

namespace tracehealth {
namespace {

using server::Table;

std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(s); }

std::string Age(const google::protobuf::Duration& d) {
  int64_t s = d.seconds();
  if (s < 120) return absl::StrCat(s, "s");
  if (s < 7200) return absl::StrCat(s / 60, "m");
  return absl::StrCat(s / 3600, "h");
}

std::string When(const google::protobuf::Timestamp& ts) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S",
                          absl::FromUnixSeconds(ts.seconds()),
                          absl::UTCTimeZone());
}

std::string ProbeName(v1::ProbeKind kind) {
  return Lower(absl::StripPrefix(v1::ProbeKind_Name(kind), "PROBE_KIND_"));
}

void SelectHosts(const FleetCommands::Options& o, v1::HostSelector* sel) {
  for (absl::string_view id :
       absl::StrSplit(o.hosts, ',', absl::SkipWhitespace())) {
    sel->add_host_ids(std::string(absl::StripAsciiWhitespace(id)));
  }
  sel->set_labels(o.selector);
}

// --hosts/--selector and --probe (kprobe_multi_return when not given) into
// `req`, a request with both.
template <typename Request>
absl::Status SelectHostsAndProbe(const FleetCommands::Options& o,
                                 Request* req) {
  SelectHosts(o, req->mutable_hosts());
  absl::StatusOr<std::optional<v1::ProbeKind>> probe = ProbeFlag(o.model);
  if (!probe.ok()) return probe.status();
  req->set_probe_kind(probe->value_or(v1::PROBE_KIND_KPROBE_MULTI_RETURN));
  return absl::OkStatus();
}

// Looks `text` up in `names` (value, name) pairs.
template <typename Enum, size_t N>
std::optional<Enum> Pick(const std::pair<Enum, const char*> (&names)[N],
                         const std::string& text) {
  for (const auto& [value, name] : names) {
    if (Lower(text) == name) return value;
  }
  return std::nullopt;
}

template <typename Enum, size_t N>
std::string Choices(const std::pair<Enum, const char*> (&names)[N]) {
  std::vector<std::string> out;
  for (const auto& entry : names) out.push_back(entry.second);
  return absl::StrJoin(out, "|");
}

constexpr std::pair<v1::Risk, const char*> kRisks[] = {
    {v1::RISK_NONE, "none"},
    {v1::RISK_LATENCY, "latency"},
    {v1::RISK_WARNING, "warning"},
    {v1::RISK_STALL, "stall"},
};
constexpr std::pair<v1::HostSort, const char*> kSorts[] = {
    {v1::HOST_SORT_RISK, "risk"},
    {v1::HOST_SORT_HOST_ID, "host"},
    {v1::HOST_SORT_LAST_SEEN, "last_seen"},
    {v1::HOST_SORT_ATTACH_LATENCY, "latency"},
};
constexpr std::pair<v1::AlertState, const char*> kStates[] = {
    {v1::ALERT_STATE_PENDING, "pending"},
    {v1::ALERT_STATE_FIRING, "firing"},
    {v1::ALERT_STATE_RESOLVED, "resolved"},
};

}  // namespace

template <typename Req, typename Resp>
int FleetCommands::Call(grpc::Status (v1::FleetQuery::Stub::*rpc)(
                            grpc::ClientContext*, const Req&, Resp*),
                        const Req& req, Resp* resp) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   absl::ToChronoMilliseconds(options_.timeout));
  if (!options_.token.empty()) {
    ctx.AddMetadata("authorization", "Bearer " + options_.token);
  }
  grpc::Status st = (stub_.get()->*rpc)(&ctx, req, resp);
  if (!st.ok()) {
    err_ << "tracehealthctl: " << GrpcCodeName(st.error_code()) << ": "
         << EscapeText(st.error_message()) << "\n";
    return 1;
  }
  if (options_.json) return PrintJson(*resp);
  return -1;
}

int FleetCommands::Usage(const std::string& message) {
  err_ << "tracehealthctl: " << message << "\n";
  return kUsageError;
}

int FleetCommands::PrintJson(const google::protobuf::Message& m) {
  ProtoJsonOptions opts;
  opts.pretty = true;
  absl::StatusOr<std::string> json = ProtoToJson(m, opts);
  if (!json.ok()) {
    err_ << "tracehealthctl: " << json.status().message() << "\n";
    return 1;
  }
  out_ << *json;
  return 0;
}

int FleetCommands::Predict() {
  v1::PredictAttachRequest req;
  if (absl::Status st = SelectHostsAndProbe(options_, &req); !st.ok()) {
    return Usage(std::string(st.message()));
  }
  absl::StatusOr<v1::WhatIf> what_if = WhatIfFromFlags(options_.model);
  if (!what_if.ok()) return Usage(std::string(what_if.status().message()));
  *req.mutable_what_if() = *what_if;
  req.set_limit(options_.limit);
  v1::PredictAttachResponse resp;
  if (int rc = Call(&v1::FleetQuery::Stub::PredictAttach, req, &resp);
      rc >= 0) {
    return rc;
  }
  Table t({"HOST", "RISK", "LATENCY", "PASSES", "THREADS", "N_NULL", "AGE",
           "RECOMMENDATION"});
  for (const auto& a : resp.answers()) {
    const auto& p = a.prediction();
    t.AddRow({a.host_id(), RiskName(p.risk()),
              FormatSeconds(p.latency_seconds()), absl::StrCat(p.passes()),
              absl::StrCat(p.threads_total()), absl::StrCat(p.null_threads()),
              absl::StrCat(Age(a.data_age()), a.stale() ? " (stale)" : ""),
              a.recommendation()});
  }
  t.Print(out_);
  out_ << resp.matched_hosts() << " host(s) matched, probe "
       << ProbeName(req.probe_kind()) << "\n";
  if (resp.unknown_hosts_size() > 0) {
    std::vector<std::string> unknown;
    for (const std::string& id : resp.unknown_hosts())
      unknown.push_back(EscapeText(id));
    out_ << "unknown: " << absl::StrJoin(unknown, ", ") << "\n";
  }
  return 0;
}

int FleetCommands::Plan() {
  v1::PredictAttachRequest req;
  if (absl::Status st = SelectHostsAndProbe(options_, &req); !st.ok()) {
    return Usage(std::string(st.message()));
  }
  if (absl::Status st =
          PlanRequestFromFlags(options_.plan, options_.model, &req);
      !st.ok()) {
    return Usage(std::string(st.message()));
  }
  const int32_t limit = options_.limit;
  req.set_limit(limit > 0 ? limit : 10);
  v1::PredictAttachResponse resp;
  if (int rc = Call(&v1::FleetQuery::Stub::PredictAttach, req, &resp);
      rc >= 0) {
    return rc;
  }
  PrintPlan(req, resp, out_);
  return 0;
}

int FleetCommands::Hosts() {
  v1::ListHostsRequest req;
  if (absl::Status st = SelectHostsAndProbe(options_, &req); !st.ok()) {
    return Usage(std::string(st.message()));
  }
  const std::string mr = options_.min_risk;
  if (!mr.empty()) {
    std::optional<v1::Risk> r = Pick(kRisks, mr);
    if (!r) {
      return Usage(absl::StrCat("--min_risk: expected ", Choices(kRisks),
                                ", got '", EscapeText(mr), "'"));
    }
    req.set_min_risk(*r);
  }
  const std::string sort = options_.sort;
  std::optional<v1::HostSort> s = Pick(kSorts, sort);
  if (!s) {
    return Usage(absl::StrCat("--sort: expected ", Choices(kSorts), ", got '",
                              EscapeText(sort), "'"));
  }
  req.set_sort(*s);
  req.set_limit(options_.limit);
  v1::ListHostsResponse resp;
  if (int rc = Call(&v1::FleetQuery::Stub::ListHosts, req, &resp); rc >= 0)
    return rc;
  PrintSummaries(resp.hosts());
  out_ << resp.matched_hosts() << " host(s)\n";
  return 0;
}

int FleetCommands::Host(const std::string& id) {
  v1::GetHostRequest req;
  req.set_host_id(id);
  v1::HostState resp;
  if (int rc = Call(&v1::FleetQuery::Stub::GetHost, req, &resp); rc >= 0)
    return rc;
  const v1::HostReport& r = resp.latest();
  std::vector<std::string> labels;
  for (const auto& [k, v] : resp.labels())
    labels.push_back(absl::StrCat(k, "=", v));
  std::sort(labels.begin(), labels.end());
  out_ << "host        " << EscapeText(resp.host_id())
       << (resp.stale() ? " (stale)" : "") << "\n"
       << "labels      " << EscapeText(absl::StrJoin(labels, ",")) << "\n"
       << "first seen  " << When(resp.first_seen()) << "\n"
       << "last seen   " << When(resp.last_seen()) << "\n"
       << "reports     " << resp.reports() << " (latest seq " << r.seq()
       << ")\n"
       << "kernel      " << EscapeText(r.snapshot().kernel().release())
       << ", preempt " << PreemptModeName(r.snapshot().kernel().preempt_mode())
       << "\n"
       << "threads     " << r.snapshot().threads().total() << "\n"
       << "worst risk  " << RiskName(r.predictions().worst_risk()) << "\n\n";
  Table t({"PROBE", "FGRAPH", "RISK", "LATENCY", "LONGEST PASS", "SUMMARY"});
  for (const auto& a : r.predictions().attach()) {
    t.AddRow({ProbeName(a.probe_kind()),
              a.uses_fgraph() ? (a.fgraph_already_active() ? "active" : "yes")
                              : "no",
              RiskName(a.risk()), FormatSeconds(a.latency_seconds()),
              FormatSeconds(a.longest_pass_seconds()), a.summary()});
  }
  t.Print(out_);
  const auto& sd = r.predictions().stack_depot();
  const auto& vp = r.predictions().vmap_purge();
  out_ << "\nstack depot: " << RiskName(sd.risk()) << "  "
       << EscapeText(sd.summary()) << "\n"
       << "vmap purge:  " << RiskName(vp.risk()) << "  "
       << EscapeText(vp.summary()) << "\n";
  return 0;
}

int FleetCommands::Summary() {
  v1::FleetSummaryRequest req;
  if (absl::Status st = SelectHostsAndProbe(options_, &req); !st.ok()) {
    return Usage(std::string(st.message()));
  }
  if (options_.limit > 0) req.set_worst(options_.limit);
  v1::FleetSummaryResponse resp;
  if (int rc = Call(&v1::FleetQuery::Stub::FleetSummary, req, &resp); rc >= 0)
    return rc;
  out_ << resp.hosts() << " host(s), " << resp.stale_hosts() << " stale, "
       << resp.firing_alerts() << " firing alert(s)\n\n";
  Table counts({"RISK", "HOSTS"});
  for (const auto& c : resp.by_risk()) {
    counts.AddRow({RiskName(c.risk()), absl::StrCat(c.hosts())});
  }
  counts.Print(out_);
  out_ << "\nworst hosts:\n";
  PrintSummaries(resp.worst());
  return 0;
}

int FleetCommands::Alerts() {
  v1::ListAlertsRequest req;
  const std::string s = options_.state;
  if (!s.empty()) {
    std::optional<v1::AlertState> state = Pick(kStates, s);
    if (!state) {
      return Usage(absl::StrCat("--state: expected ", Choices(kStates),
                                ", got '", EscapeText(s), "'"));
    }
    req.set_state(*state);
  }
  req.set_limit(options_.limit);
  v1::ListAlertsResponse resp;
  if (int rc = Call(&v1::FleetQuery::Stub::ListAlerts, req, &resp); rc >= 0)
    return rc;
  Table t({"RULE", "HOST", "STATE", "SEVERITY", "VALUE", "SINCE", "SUMMARY"});
  for (const auto& a : resp.alerts()) {
    auto it = a.annotations().find("summary");
    t.AddRow({a.rule(), a.host_id(),
              Lower(absl::StripPrefix(v1::AlertState_Name(a.state()),
                                      "ALERT_STATE_")),
              a.severity(), absl::StrFormat("%g", a.value()),
              When(a.active_since()),
              it == a.annotations().end() ? "" : it->second});
  }
  t.Print(out_);
  out_ << resp.alerts_size() << " alert(s)\n";
  return 0;
}

int FleetCommands::Events(const std::string& host) {
  absl::StatusOr<v1::ListEventsRequest> req =
      server::EventsRequest(host, Lower(options_.predicted), options_.since,
                            options_.limit, absl::Now());
  if (!req.ok()) return Usage(std::string(req.status().message()));
  v1::ListEventsResponse resp;
  if (int rc = Call(&v1::FleetQuery::Stub::ListEvents, *req, &resp); rc >= 0)
    return rc;
  server::PrintEvents(resp, out_);
  return 0;
}

int FleetCommands::Accuracy() {
  absl::StatusOr<v1::AccuracyRequest> req =
      server::AccuracyRequestOf(options_.since, options_.limit, absl::Now());
  if (!req.ok()) return Usage(std::string(req.status().message()));
  v1::AccuracyResponse resp;
  if (int rc = Call(&v1::FleetQuery::Stub::Accuracy, *req, &resp); rc >= 0)
    return rc;
  server::PrintAccuracy(resp, out_);
  return 0;
}

void FleetCommands::PrintSummaries(
    const google::protobuf::RepeatedPtrField<v1::HostSummary>& hosts) {
  Table t({"HOST", "RISK", "ATTACH", "ATTACH RISK", "THREADS", "KERNEL",
           "POOL BUDGET", "PURGE", "LAST SEEN"});
  for (const auto& h : hosts) {
    t.AddRow({h.host_id(), RiskName(h.worst_risk()),
              FormatSeconds(h.attach_latency_seconds()),
              RiskName(h.attach_risk()),
              h.has_threads() ? absl::StrCat(h.threads()) : "?",
              h.has_kernel_release() ? h.kernel_release() : "?",
              h.has_pool_budget_ratio()
                  ? absl::StrFormat("%.1f%%", h.pool_budget_ratio() * 100)
                  : "-",
              FormatSeconds(h.purge_seconds()),
              absl::StrCat(When(h.last_seen()), h.stale() ? " (stale)" : "")});
  }
  t.Print(out_);
}

}  // namespace tracehealth
