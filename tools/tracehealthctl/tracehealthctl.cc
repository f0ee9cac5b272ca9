// tracehealthctl: command-line client of the FleetQuery API, plus offline
// model evaluation.
//
//   tracehealthctl [--server=HOST:PORT] [--json] predict [--probe=KIND]
//       [--hosts=a,b | --selector=role=db] [--threads=N] [--null_threads=N]
//       [--batch=B] [--preempt=none|voluntary|full|lazy|rt] [--kernel=REL]
//   tracehealthctl hosts [--min_risk=warning]
//   [--sort=risk|host|last_seen|latency] tracehealthctl host ID tracehealthctl
//   summary tracehealthctl alerts [--state=firing] tracehealthctl events
//   [HOST_ID] [--predicted=yes|no|unknown] [--since=168h] tracehealthctl
//   model fgraph|stackdepot|vmap [model flags]
//
// Readable tables by default; --json prints the response as protobuf JSON.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/client_credentials.h"
#include "common/enum_names.h"
#include "common/format.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tools/tracehealthctl/events_table.h"
#include "tools/tracehealthctl/gate_command.h"
#include "tools/tracehealthctl/model_command.h"
#include "tools/tracehealthctl/table.h"

// Shared with `model` (defined in tools/tracehealthctl/model_request.cc).
ABSL_DECLARE_FLAG(std::string, kernel);
ABSL_DECLARE_FLAG(std::string, preempt);
ABSL_DECLARE_FLAG(int64_t, threads);
ABSL_DECLARE_FLAG(int64_t, null_threads);
ABSL_DECLARE_FLAG(std::string, fgraph_active);
ABSL_DECLARE_FLAG(int64_t, batch);
ABSL_DECLARE_FLAG(double, c_visit_ns);
ABSL_DECLARE_FLAG(std::string, probe);
ABSL_DECLARE_FLAG(double, latency_budget);

ABSL_FLAG(std::string, server, "127.0.0.1:7443",
          "tracehealth-server gRPC address");
ABSL_FLAG(bool, json, false, "Print protobuf JSON instead of tables");
ABSL_FLAG(std::string, token_file, "", "File with the query API bearer token");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA of the server certificate (enables TLS)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate (mTLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM client key (mTLS)");
ABSL_FLAG(std::string, tls_server_name, "",
          "Expected server name, when not the address");
ABSL_FLAG(std::string, hosts, "", "Comma-separated host ids");
ABSL_FLAG(std::string, selector, "",
          "Label selector, e.g. role=db,zone=~us-.*");
ABSL_FLAG(std::string, min_risk, "", "hosts: none|latency|warning|stall");
ABSL_FLAG(std::string, sort, "risk", "hosts: risk|host|last_seen|latency");
ABSL_FLAG(int32_t, limit, 0, "At most this many rows (server default 100)");
ABSL_FLAG(std::string, state, "",
          "alerts: pending|firing|resolved (default: active)");
ABSL_FLAG(std::string, predicted, "",
          "events: yes|no|unknown, as the models predicted them (default: "
          "all)");
ABSL_FLAG(absl::Duration, since, absl::Hours(24 * 7),
          "events: those logged this long before now");
ABSL_FLAG(double, timeout, 30, "RPC deadline in seconds");

namespace tracehealth::server {
namespace {

constexpr int kUsage = 2;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

// A --probe value: the command-line name (common/enum_names.h) or the
// enum's own name without its prefix ("fentry_fexit"); empty is
// kprobe_multi_return.
bool ParseProbe(const std::string& text, v1::ProbeKind* kind) {
  std::string t = Lower(text);
  if (t.empty()) t = "kprobe_multi_return";
  if (std::optional<v1::ProbeKind> k = ProbeKindFromFlag(t)) {
    *kind = *k;
    return true;
  }
  return v1::ProbeKind_Parse("PROBE_KIND_" + absl::AsciiStrToUpper(t), kind);
}

bool ParsePreempt(const std::string& text, v1::PreemptMode* mode) {
  std::optional<v1::PreemptMode> m = PreemptModeFromName(Lower(text));
  if (m.has_value()) *mode = *m;
  return m.has_value();
}

class Ctl {
 public:
  Ctl(std::unique_ptr<v1::FleetQuery::Stub> stub, std::string token)
      : stub_(std::move(stub)), token_(std::move(token)) {}

  int Predict() {
    v1::PredictAttachRequest req;
    if (!SelectHosts(req.mutable_hosts())) return kUsage;
    v1::ProbeKind kind;
    if (!ParseProbe(absl::GetFlag(FLAGS_probe), &kind)) {
      std::cerr << "unknown --probe " << absl::GetFlag(FLAGS_probe) << "\n";
      return kUsage;
    }
    req.set_probe_kind(kind);
    v1::WhatIf* w = req.mutable_what_if();
    if (absl::GetFlag(FLAGS_threads) >= 0)
      w->set_threads(absl::GetFlag(FLAGS_threads));
    if (absl::GetFlag(FLAGS_null_threads) >= 0) {
      w->set_null_threads(absl::GetFlag(FLAGS_null_threads));
    }
    if (absl::GetFlag(FLAGS_batch) >= 0)
      w->set_batch(absl::GetFlag(FLAGS_batch));
    if (!absl::GetFlag(FLAGS_preempt).empty()) {
      v1::PreemptMode mode;
      if (!ParsePreempt(absl::GetFlag(FLAGS_preempt), &mode)) {
        std::cerr << "unknown --preempt " << absl::GetFlag(FLAGS_preempt)
                  << "\n";
        return kUsage;
      }
      w->set_preempt_mode(mode);
    }
    if (!absl::GetFlag(FLAGS_kernel).empty())
      w->set_kernel_release(absl::GetFlag(FLAGS_kernel));
    if (absl::GetFlag(FLAGS_c_visit_ns) > 0) {
      w->set_c_visit_seconds(absl::GetFlag(FLAGS_c_visit_ns) * 1e-9);
    }
    if (absl::GetFlag(FLAGS_latency_budget) > 0) {
      w->set_latency_budget_seconds(absl::GetFlag(FLAGS_latency_budget));
    }
    const std::string fa = absl::GetFlag(FLAGS_fgraph_active);
    if (!fa.empty()) w->set_fgraph_active(fa == "true" || fa == "1");
    req.set_limit(absl::GetFlag(FLAGS_limit));
    v1::PredictAttachResponse resp;
    if (int rc = Call(&v1::FleetQuery::Stub::PredictAttach, req, &resp);
        rc >= 0)
      return rc;
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
    t.Print(std::cout);
    std::cout << resp.matched_hosts() << " host(s) matched, probe "
              << Lower(
                     absl::StripPrefix(v1::ProbeKind_Name(kind), "PROBE_KIND_"))
              << "\n";
    if (resp.unknown_hosts_size() > 0) {
      std::cout << "unknown: " << absl::StrJoin(resp.unknown_hosts(), ", ")
                << "\n";
    }
    return 0;
  }

  int Hosts() {
    v1::ListHostsRequest req;
    if (!SelectHosts(req.mutable_hosts())) return kUsage;
    const std::string mr = absl::GetFlag(FLAGS_min_risk);
    if (!mr.empty()) {
      v1::Risk r;
      if (!v1::Risk_Parse("RISK_" + absl::AsciiStrToUpper(mr), &r)) {
        std::cerr << "unknown --min_risk " << mr << "\n";
        return kUsage;
      }
      req.set_min_risk(r);
    }
    const std::string sort = absl::GetFlag(FLAGS_sort);
    if (sort == "risk") {
      req.set_sort(v1::HOST_SORT_RISK);
    } else if (sort == "host") {
      req.set_sort(v1::HOST_SORT_HOST_ID);
    } else if (sort == "last_seen") {
      req.set_sort(v1::HOST_SORT_LAST_SEEN);
    } else if (sort == "latency") {
      req.set_sort(v1::HOST_SORT_ATTACH_LATENCY);
    } else {
      std::cerr << "unknown --sort " << sort << "\n";
      return kUsage;
    }
    v1::ProbeKind kind;
    if (!ParseProbe(absl::GetFlag(FLAGS_probe), &kind)) return kUsage;
    req.set_probe_kind(kind);
    req.set_limit(absl::GetFlag(FLAGS_limit));
    v1::ListHostsResponse resp;
    if (int rc = Call(&v1::FleetQuery::Stub::ListHosts, req, &resp); rc >= 0)
      return rc;
    PrintSummaries(resp.hosts());
    std::cout << resp.matched_hosts() << " host(s)\n";
    return 0;
  }

  int Host(const std::string& id) {
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
    std::cout << "host        " << resp.host_id()
              << (resp.stale() ? " (stale)" : "") << "\n"
              << "labels      " << absl::StrJoin(labels, ",") << "\n"
              << "first seen  " << When(resp.first_seen()) << "\n"
              << "last seen   " << When(resp.last_seen()) << "\n"
              << "reports     " << resp.reports() << " (latest seq " << r.seq()
              << ")\n"
              << "kernel      " << r.snapshot().kernel().release()
              << ", preempt "
              << PreemptModeName(r.snapshot().kernel().preempt_mode()) << "\n"
              << "threads     " << r.snapshot().threads().total() << "\n"
              << "worst risk  " << RiskName(r.predictions().worst_risk())
              << "\n\n";
    Table t({"PROBE", "FGRAPH", "RISK", "LATENCY", "LONGEST PASS", "SUMMARY"});
    for (const auto& a : r.predictions().attach()) {
      t.AddRow({Lower(absl::StripPrefix(v1::ProbeKind_Name(a.probe_kind()),
                                        "PROBE_KIND_")),
                a.uses_fgraph() ? (a.fgraph_already_active() ? "active" : "yes")
                                : "no",
                RiskName(a.risk()), FormatSeconds(a.latency_seconds()),
                FormatSeconds(a.longest_pass_seconds()), a.summary()});
    }
    t.Print(std::cout);
    const auto& sd = r.predictions().stack_depot();
    const auto& vp = r.predictions().vmap_purge();
    std::cout << "\nstack depot: " << RiskName(sd.risk()) << "  "
              << sd.summary() << "\n"
              << "vmap purge:  " << RiskName(vp.risk()) << "  " << vp.summary()
              << "\n";
    return 0;
  }

  int Summary() {
    v1::FleetSummaryRequest req;
    if (!SelectHosts(req.mutable_hosts())) return kUsage;
    v1::ProbeKind kind;
    if (!ParseProbe(absl::GetFlag(FLAGS_probe), &kind)) return kUsage;
    req.set_probe_kind(kind);
    if (absl::GetFlag(FLAGS_limit) > 0)
      req.set_worst(absl::GetFlag(FLAGS_limit));
    v1::FleetSummaryResponse resp;
    if (int rc = Call(&v1::FleetQuery::Stub::FleetSummary, req, &resp); rc >= 0)
      return rc;
    std::cout << resp.hosts() << " host(s), " << resp.stale_hosts()
              << " stale, " << resp.firing_alerts() << " firing alert(s)\n\n";
    Table counts({"RISK", "HOSTS"});
    for (const auto& c : resp.by_risk()) {
      counts.AddRow({RiskName(c.risk()), absl::StrCat(c.hosts())});
    }
    counts.Print(std::cout);
    std::cout << "\nworst hosts:\n";
    PrintSummaries(resp.worst());
    return 0;
  }

  int Alerts() {
    v1::ListAlertsRequest req;
    const std::string s = absl::GetFlag(FLAGS_state);
    if (!s.empty()) {
      v1::AlertState state;
      if (!v1::AlertState_Parse("ALERT_STATE_" + absl::AsciiStrToUpper(s),
                                &state)) {
        std::cerr << "unknown --state " << s << "\n";
        return kUsage;
      }
      req.set_state(state);
    }
    req.set_limit(absl::GetFlag(FLAGS_limit));
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
    t.Print(std::cout);
    std::cout << resp.alerts_size() << " alert(s)\n";
    return 0;
  }

  int Events(const std::string& host) {
    absl::StatusOr<v1::ListEventsRequest> req = EventsRequest(
        host, Lower(absl::GetFlag(FLAGS_predicted)), absl::GetFlag(FLAGS_since),
        absl::GetFlag(FLAGS_limit), absl::Now());
    if (!req.ok()) {
      std::cerr << "tracehealthctl: " << req.status().message() << "\n";
      return kUsage;
    }
    v1::ListEventsResponse resp;
    if (int rc = Call(&v1::FleetQuery::Stub::ListEvents, *req, &resp); rc >= 0)
      return rc;
    PrintEvents(resp, std::cout);
    return 0;
  }

 private:
  // Calls `rpc`: -1 when the caller prints `resp` as a table; otherwise the
  // exit code (the error printed, or the JSON of `resp` with --json).
  template <typename Req, typename Resp>
  int Call(grpc::Status (v1::FleetQuery::Stub::*rpc)(grpc::ClientContext*,
                                                     const Req&, Resp*),
           const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    Prepare(ctx);
    grpc::Status st = (stub_.get()->*rpc)(&ctx, req, resp);
    if (!st.ok()) return RpcError(st);
    if (absl::GetFlag(FLAGS_json)) return PrintJson(*resp);
    return -1;
  }

  bool SelectHosts(v1::HostSelector* sel) {
    for (absl::string_view id : absl::StrSplit(absl::GetFlag(FLAGS_hosts), ',',
                                               absl::SkipWhitespace())) {
      sel->add_host_ids(std::string(absl::StripAsciiWhitespace(id)));
    }
    sel->set_labels(absl::GetFlag(FLAGS_selector));
    return true;
  }

  void Prepare(grpc::ClientContext& ctx) {
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>(
                         absl::GetFlag(FLAGS_timeout) * 1000)));
    if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
  }

  int RpcError(const grpc::Status& st) {
    std::cerr << "tracehealthctl: " << st.error_code() << ": "
              << st.error_message() << "\n";
    return 1;
  }

  int PrintJson(const google::protobuf::Message& m) {
    std::string out;
    google::protobuf::util::JsonPrintOptions opts;
    opts.add_whitespace = true;
    opts.preserve_proto_field_names = true;
    auto st = google::protobuf::util::MessageToJsonString(m, &out, opts);
    if (!st.ok()) {
      std::cerr << "tracehealthctl: " << st.ToString() << "\n";
      return 1;
    }
    std::cout << out;
    return 0;
  }

  void PrintSummaries(
      const google::protobuf::RepeatedPtrField<v1::HostSummary>& hosts) {
    Table t({"HOST", "RISK", "ATTACH", "ATTACH RISK", "THREADS", "KERNEL",
             "POOL BUDGET", "PURGE", "LAST SEEN"});
    for (const auto& h : hosts) {
      t.AddRow(
          {h.host_id(), RiskName(h.worst_risk()),
           FormatSeconds(h.attach_latency_seconds()), RiskName(h.attach_risk()),
           h.has_threads() ? absl::StrCat(h.threads()) : "?",
           h.has_kernel_release() ? h.kernel_release() : "?",
           h.has_pool_budget_ratio()
               ? absl::StrFormat("%.1f%%", h.pool_budget_ratio() * 100)
               : "-",
           FormatSeconds(h.purge_seconds()),
           absl::StrCat(When(h.last_seen()), h.stale() ? " (stale)" : "")});
    }
    t.Print(std::cout);
  }

  std::unique_ptr<v1::FleetQuery::Stub> stub_;
  std::string token_;
};

ClientTls TlsFlags() {
  ClientTls tls;
  tls.ca_file = absl::GetFlag(FLAGS_tls_ca);
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  tls.key_file = absl::GetFlag(FLAGS_tls_key);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  return tls;
}

int Run(const std::vector<char*>& positional) {
  if (positional.size() < 2) {
    std::cerr << absl::ProgramUsageMessage() << "\n";
    return kUsage;
  }
  const std::string cmd = positional[1];
  if (cmd == "model") {
    std::vector<std::string> args(positional.begin() + 2, positional.end());
    return RunModelCommand(args, absl::GetFlag(FLAGS_json), std::cout,
                           std::cerr);
  }
  std::string token;
  if (!absl::GetFlag(FLAGS_token_file).empty()) {
    token = std::string(
        absl::StripAsciiWhitespace(ReadAll(absl::GetFlag(FLAGS_token_file))));
    if (token.empty()) {
      std::cerr << "tracehealthctl: no token in "
                << absl::GetFlag(FLAGS_token_file) << "\n";
      return kUsage;
    }
  }
  const ClientTls tls = TlsFlags();
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
      ClientCredentials(tls);
  if (!creds.ok()) {
    std::cerr << "tracehealthctl: " << creds.status().message() << "\n";
    return kUsage;
  }
  grpc::ChannelArguments args;
  ApplyServerName(tls, &args);
  auto channel =
      grpc::CreateCustomChannel(absl::GetFlag(FLAGS_server), *creds, args);
  Ctl ctl(v1::FleetQuery::NewStub(channel), token);
  if (cmd == "predict") return ctl.Predict();
  if (cmd == "hosts") return ctl.Hosts();
  if (cmd == "summary") return ctl.Summary();
  if (cmd == "alerts") return ctl.Alerts();
  if (cmd == "events") {
    if (positional.size() > 3) {
      std::cerr << "usage: tracehealthctl events [HOST_ID]\n";
      return kUsage;
    }
    return ctl.Events(positional.size() == 3 ? positional[2] : "");
  }
  if (cmd == "host") {
    if (positional.size() != 3) {
      std::cerr << "usage: tracehealthctl host HOST_ID\n";
      return kUsage;
    }
    return ctl.Host(positional[2]);
  }
  std::cerr << "tracehealthctl: unknown command \"" << cmd
            << "\" (predict, hosts, host, summary, alerts, events, model)\n";
  return kUsage;
}

}  // namespace
}  // namespace tracehealth::server

int main(int argc, char** argv) {
  // The gate parses its own flags: its usage errors exit 3, not absl's 1.
  if (tracehealth::IsGateCommand(argc, argv)) {
    return tracehealth::RunGateMain(argc, argv, std::cout, std::cerr);
  }
  absl::SetProgramUsageMessage(
      "tracehealthctl [flags] predict|hosts|host ID|summary|alerts|events "
      "[ID]|model KIND\n  tracehealthctl gate --help");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  return tracehealth::server::Run(positional);
}
