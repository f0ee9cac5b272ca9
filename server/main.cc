// tracehealth-server: durable telemetry ingest, pre-attach query API and
// Prometheus metrics for a fleet of tracehealth agents.
//
// Startup: open the store (migrating it), rebuild the latest-state index,
// start the writer, gRPC (ingest + query) and the /metrics exposer, then
// write --port_file. SIGTERM/SIGINT: stop accepting, let each stream's
// received reports be committed and acked, stop the writer, exit 0.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/exposer.h"
#include "server/alerts/alerting.h"
#include "server/alerts/rules.h"
#include "server/auth/server_credentials.h"
#include "server/housekeeper.h"
#include "server/index/host_index.h"
#include "server/ingest/ingest_service.h"
#include "server/ingest/report_writer.h"
#include "server/metrics/host_collector.h"
#include "server/metrics/server_metrics.h"
#include "server/query/query_service.h"
#include "server/storage/sqlite/sqlite_storage.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7443", "gRPC listen address (port 0: pick one)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "HTTP /metrics listen address, host:port (port 0: pick one)");
ABSL_FLAG(std::string, data_dir, "", "Directory of the SQLite store (tracehealth.db)");
ABSL_FLAG(std::string, port_file, "",
          "When set, written once both listen: lines grpc=HOST:PORT and metrics=HOST:PORT");
ABSL_FLAG(std::string, retention, "30d",
          "Keep reports this long after they were received (s, m, h, d); each host's "
          "newest report is always kept");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate (enables TLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM server private key");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA for client certificates: requires mTLS; the certificate's CN or a "
          "DNS SAN is the only host_id a client may report as");
ABSL_FLAG(std::string, query_token_file, "",
          "File holding the bearer token the query API requires");
ABSL_FLAG(int64_t, max_message_bytes, 4 << 20, "Largest gRPC message accepted");
ABSL_FLAG(int64_t, max_report_bytes, 1 << 20,
          "Largest report accepted; bigger ones are rejected (INVALID_ARGUMENT) and "
          "the stream continues");
ABSL_FLAG(double, stale_after_intervals, 3,
          "A host is stale after this many report intervals without a report");
ABSL_FLAG(bool, sqlite_synchronous_full, false,
          "fsync every commit (survives power loss; much slower). Default: commits "
          "survive a server crash");
ABSL_FLAG(double, host_report_rate, 10,
          "Reports per second one host may send (token bucket; 0 = unlimited). Over "
          "it, the stream ends with RESOURCE_EXHAUSTED and the agent retries later");
ABSL_FLAG(double, host_report_burst, 600, "Token bucket size of --host_report_rate");
ABSL_FLAG(int64_t, writer_queue, 4096,
          "Reports queued for the writer at most (bounds memory: streams wait when full)");

ABSL_FLAG(std::string, alert_rules, "",
          "YAML alert rules (deploy/alerts/rules.yaml); empty: no server-side alerting");
ABSL_FLAG(std::string, alertmanager_url, "",
          "Alertmanager base URL (http://host:9093): firing and resolved alerts are posted "
          "to its v2 API");
ABSL_FLAG(absl::Duration, alert_eval_interval, absl::Seconds(5),
          "How often `for` timers and host-silence rules are evaluated");
ABSL_FLAG(absl::Duration, alert_resend_interval, absl::Minutes(1),
          "How often firing alerts are re-sent to Alertmanager");

namespace tracehealth::server {
namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "tracehealth-server: %s\n", what.c_str());
  return 1;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& content) {
  std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content;
    out.flush();
    if (!out) return absl::InternalError(absl::StrCat(tmp, ": write failed"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("rename ", tmp, " -> ", path, " failed"));
  }
  return absl::OkStatus();
}

std::string HostPart(const std::string& addr) {
  size_t colon = addr.rfind(':');
  return colon == std::string::npos ? addr : addr.substr(0, colon);
}

int Main(const sigset_t& sigs) {
  const std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (data_dir.empty()) return Fail("--data_dir is required");
  absl::StatusOr<absl::Duration> retention = ParseRetention(absl::GetFlag(FLAGS_retention));
  if (!retention.ok()) return Fail(std::string(retention.status().message()));
  std::string token;
  if (!absl::GetFlag(FLAGS_query_token_file).empty()) {
    std::ifstream in(absl::GetFlag(FLAGS_query_token_file));
    std::stringstream ss;
    ss << in.rdbuf();
    token = std::string(absl::StripAsciiWhitespace(ss.str()));
    if (!in || token.empty()) {
      return Fail(absl::StrCat(absl::GetFlag(FLAGS_query_token_file),
                               ": cannot read a token"));
    }
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds =
      MakeServerCredentials(absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                            absl::GetFlag(FLAGS_tls_client_ca));
  if (!creds.ok()) return Fail(creds.status().ToString());

  SqliteOptions sopts;
  sopts.synchronous_full = absl::GetFlag(FLAGS_sqlite_synchronous_full);
  absl::StatusOr<std::unique_ptr<SqliteStorage>> storage =
      SqliteStorage::Open(data_dir + "/tracehealth.db", sopts);
  if (!storage.ok()) return Fail(storage.status().ToString());

  HostIndex index;
  absl::Time load_start = absl::Now();
  absl::Status loaded = index.LoadFrom(**storage);
  if (absl::IsDataLoss(loaded)) {
    std::fprintf(stderr, "tracehealth-server: %s (host skipped)\n", loaded.ToString().c_str());
  } else if (!loaded.ok()) {
    return Fail(loaded.ToString());
  }
  std::fprintf(stderr, "tracehealth-server: %zu hosts loaded in %s\n", index.size(),
               absl::FormatDuration(absl::Now() - load_start).c_str());

  std::vector<AlertRule> rules;
  if (!absl::GetFlag(FLAGS_alert_rules).empty()) {
    std::ifstream in(absl::GetFlag(FLAGS_alert_rules));
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) return Fail(absl::StrCat(absl::GetFlag(FLAGS_alert_rules), ": cannot read"));
    absl::StatusOr<std::vector<AlertRule>> parsed = ParseAlertRules(ss.str());
    if (!parsed.ok()) {
      return Fail(absl::StrCat(absl::GetFlag(FLAGS_alert_rules), ": ",
                               parsed.status().message()));
    }
    rules = *std::move(parsed);
  }
  Alerting::Options aopts;
  aopts.eval_interval = absl::GetFlag(FLAGS_alert_eval_interval);
  if (!absl::GetFlag(FLAGS_alertmanager_url).empty()) {
    AlertmanagerNotifier::Options nopts;
    nopts.url = absl::GetFlag(FLAGS_alertmanager_url);
    nopts.resend_interval = absl::GetFlag(FLAGS_alert_resend_interval);
    aopts.alertmanager = nopts;
  }
  const size_t rule_count = rules.size();
  Alerting alerting(std::move(rules), storage->get(), &index, aopts);
  absl::Status alerts_restored = alerting.Start();
  if (!alerts_restored.ok()) return Fail(alerts_restored.ToString());
  std::fprintf(stderr, "tracehealth-server: %zu alert rules%s\n", rule_count,
               aopts.alertmanager ? ", delivering to Alertmanager" : "");

  ServerMetrics metrics;
  ReportWriter::Options wopts;
  wopts.queue_capacity = static_cast<size_t>(absl::GetFlag(FLAGS_writer_queue));
  ReportWriter writer(storage->get(), wopts,
                      [&, last_logged = absl::InfinitePast(), unlogged = 0](
                          absl::Span<const CommittedReport> stored,
                          const BatchStats& s) mutable {
                        if (s.failed) {
                          metrics.CountCommitFailure();
                          // The streams of the batch end UNAVAILABLE and
                          // their agents replay; say why here too, at most
                          // once a minute.
                          absl::Time now = absl::Now();
                          if (now - last_logged < absl::Minutes(1)) {
                            ++unlogged;
                            return;
                          }
                          std::fprintf(stderr,
                                       "tracehealth-server: storing %zu reports failed: %s"
                                       " (%d more failures since the last message)\n",
                                       s.reports, s.error.ToString().c_str(), unlogged);
                          last_logged = now;
                          unlogged = 0;
                          return;
                        }
                        // Alerting reads each host's previous report from the
                        // index, so it goes first.
                        alerting.OnCommitted(stored);
                        index.Apply(stored);
                        metrics.CountStored(static_cast<double>(s.stored));
                        metrics.CountDuplicates(static_cast<double>(s.duplicates));
                        metrics.ObserveCommit(absl::ToDoubleSeconds(s.commit_time),
                                              static_cast<double>(s.reports));
                      });

  IngestOptions iopts;
  iopts.limits.max_report_bytes = static_cast<size_t>(absl::GetFlag(FLAGS_max_report_bytes));
  iopts.require_client_identity = !absl::GetFlag(FLAGS_tls_client_ca).empty();
  iopts.host_reports_per_second = absl::GetFlag(FLAGS_host_report_rate);
  iopts.host_report_burst = absl::GetFlag(FLAGS_host_report_burst);
  IngestService ingest(&writer, &metrics, iopts);
  QueryOptions qopts;
  qopts.token = token;
  qopts.stale_after_intervals = absl::GetFlag(FLAGS_stale_after_intervals);
  QueryService query(&index, storage->get(), &metrics, qopts);

  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen), *creds, &grpc_port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(absl::GetFlag(FLAGS_max_message_bytes)));
  builder.RegisterService(&ingest);
  builder.RegisterService(&query);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || grpc_port == 0) {
    return Fail(absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_listen)));
  }

  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    exposer = std::make_unique<prometheus::Exposer>(absl::GetFlag(FLAGS_metrics_listen));
  } catch (const std::exception& e) {
    server->Shutdown();
    return Fail(absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_metrics_listen),
                             ": ", e.what()));
  }
  auto host_metrics = std::make_shared<HostCollector>(&index, qopts.stale_after_intervals);
  exposer->RegisterCollectable(metrics.registry());
  exposer->RegisterCollectable(host_metrics);
  exposer->RegisterCollectable(alerting.collector());
  std::vector<int> mports = exposer->GetListeningPorts();
  if (mports.empty()) return Fail("metrics exposer has no port");

  Housekeeper::Options hopts;
  hopts.retention = *retention;
  Housekeeper housekeeper(storage->get(), &index, &metrics, hopts);
  housekeeper.Start();

  std::string grpc_addr = absl::StrCat(HostPart(absl::GetFlag(FLAGS_listen)), ":", grpc_port);
  std::string metrics_addr =
      absl::StrCat(HostPart(absl::GetFlag(FLAGS_metrics_listen)), ":", mports[0]);
  std::fprintf(stderr, "tracehealth-server: grpc=%s metrics=%s data=%s\n", grpc_addr.c_str(),
               metrics_addr.c_str(), data_dir.c_str());
  if (!absl::GetFlag(FLAGS_port_file).empty()) {
    absl::Status st = WriteFileAtomically(
        absl::GetFlag(FLAGS_port_file),
        absl::StrCat("grpc=", grpc_addr, "\nmetrics=", metrics_addr, "\n"));
    if (!st.ok()) {
      server->Shutdown();
      return Fail(st.ToString());
    }
  }

  int sig = 0;
  sigwait(&sigs, &sig);
  std::fprintf(stderr, "tracehealth-server: signal %d, draining\n", sig);
  ingest.BeginShutdown();
  // Streams whose reads are pending are cancelled at the deadline; reports
  // already read are still committed by the writer below.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  writer.Stop();
  alerting.Stop();
  housekeeper.Stop();
  exposer.reset();
  std::fprintf(stderr, "tracehealth-server: stopped\n");
  return 0;
}

}  // namespace
}  // namespace tracehealth::server

int main(int argc, char** argv) {
  // SIGTERM/SIGINT are taken by sigwait in Main; block them before any
  // thread (gRPC's included) starts, so every thread inherits the mask.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  // The system's absl is built without NDEBUG, which turns on absl::Mutex's
  // lock-order graph: a few percent of the ingest path's CPU. Lock order is
  // checked by the TSan run (tests/reliability/run_tsan.sh) instead.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  return tracehealth::server::Main(sigs);
}
