// tracehealth-server: durable telemetry ingest, pre-attach query API and
// Prometheus metrics for a fleet of tracehealth agents.
//
// Reads the flags into a ServerConfig, starts the Server (server/server.h),
// and on SIGTERM/SIGINT drains it (stop accepting, let each stream's
// received reports be committed and acked, stop the writer) and exits 0.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/flag_help.h"
#include "server/housekeeper.h"
#include "server/server.h"

using tracehealth::server::ServerConfig;

ABSL_FLAG(std::string, listen, ServerConfig().listen,
          "gRPC listen address (port 0: pick one)");
ABSL_FLAG(std::string, metrics_listen, ServerConfig().metrics_listen,
          "HTTP listen address, host:port (port 0: pick one): /metrics, the "
          "/api/v1 JSON API and the fleet page");
ABSL_FLAG(std::string, store, ServerConfig().store,
          "sqlite (one server, --data_dir) or postgres (one or several "
          "replicas on one PostgreSQL database, --postgres_dsn)");
ABSL_FLAG(std::string, data_dir, "",
          "Directory of the SQLite store (tracehealth.db)");
ABSL_FLAG(std::string, postgres_dsn, "",
          "libpq connection string or URI of the PostgreSQL store, e.g. "
          "\"host=db1,db2 dbname=tracehealth user=tracehealth "
          "target_session_attrs=read-write\" (the primary is found among the "
          "hosts, also after a failover); a password is best kept in "
          "~/.pgpass or PGPASSFILE");
ABSL_FLAG(absl::Duration, postgres_partition_span,
          ServerConfig().postgres_partition_span,
          "Receive time each reports partition covers (whole seconds); "
          "retention drops whole partitions");
ABSL_FLAG(absl::Duration, feed_interval, ServerConfig().feed_interval,
          "How often a PostgreSQL replica reads the other replicas' commits "
          "into its index");
ABSL_FLAG(absl::Duration, max_connection_age, ServerConfig().max_connection_age,
          "Tell gRPC connections to go away after this age (+-10% jitter) so "
          "agents behind a load balancer rebalance over the replicas; 0: "
          "never");
ABSL_FLAG(absl::Duration, max_connection_age_grace,
          ServerConfig().max_connection_age_grace,
          "Time a connection past --max_connection_age has to finish before "
          "it is closed");
ABSL_FLAG(std::string, replica_name, "",
          "This replica's name in the retention lease (default HOSTNAME:PID)");
ABSL_FLAG(std::string, port_file, "",
          "When set, written once both listen: lines grpc=HOST:PORT and "
          "metrics=HOST:PORT");
ABSL_FLAG(
    std::string, retention, "30d",
    "Keep reports this long after they were received (s, m, h, d); each host's "
    "newest report is always kept");
ABSL_FLAG(std::string, rollup_retention, "400d",
          "Keep hourly rollups (per host and hour: report count, min/max/last "
          "of threads, attach latency, pool budget, purge time, worst risk) "
          "this long (s, m, h, d); they are made from the reports before "
          "--retention deletes them");
ABSL_FLAG(std::string, tls_cert, "", "PEM server certificate (enables TLS)");
ABSL_FLAG(std::string, tls_key, "", "PEM server private key");
ABSL_FLAG(
    std::string, tls_client_ca, "",
    "PEM CA for client certificates: requires mTLS; the certificate's CN or a "
    "DNS SAN is the only host_id a client may report as");
ABSL_FLAG(std::string, query_token_file, "",
          "File holding the bearer token the query API requires (gRPC "
          "FleetQuery and HTTP /api/v1)");
ABSL_FLAG(std::string, query_client_names, "",
          "RE2 pattern: only clients whose certificate CN or a SAN matches it "
          "in full may use the gRPC query API (needs --tls_client_ca); empty: "
          "any client, agents' certificates included");
ABSL_FLAG(bool, metrics_require_token, false,
          "HTTP /metrics requires the --query_token_file token too "
          "(Prometheus: `authorization` in the scrape config)");
ABSL_FLAG(std::string, http_tls_cert, "",
          "PEM certificate of the HTTP port (with --http_tls_key: HTTPS only)");
ABSL_FLAG(std::string, http_tls_key, "", "PEM private key of the HTTP port");
ABSL_FLAG(int32_t, http_threads, ServerConfig().http_threads,
          "HTTP worker threads (each serves many connections through epoll)");
ABSL_FLAG(absl::Duration, http_idle_timeout, ServerConfig().http_idle_timeout,
          "HTTP connections without traffic for this long are closed (whole "
          "seconds, at least 1s)");
ABSL_FLAG(absl::Duration, http_request_timeout,
          ServerConfig().http_request_timeout,
          "An HTTP request must arrive complete within this time of the "
          "connection or of the previous response");
ABSL_FLAG(int32_t, http_max_connections, ServerConfig().http_max_connections,
          "HTTP connections at most; beyond, new ones are closed at once");
ABSL_FLAG(int64_t, http_max_request_bytes,
          ServerConfig().http_max_request_bytes,
          "Largest HTTP request body (413 beyond)");
ABSL_FLAG(int64_t, max_message_bytes, ServerConfig().max_message_bytes,
          "Largest gRPC message accepted");
ABSL_FLAG(
    int64_t, max_report_bytes, ServerConfig().max_report_bytes,
    "Largest report accepted; bigger ones are rejected (INVALID_ARGUMENT) and "
    "the stream continues");
ABSL_FLAG(double, stale_after_intervals, ServerConfig().stale_after_intervals,
          "A host is stale after this many report intervals without a report");
ABSL_FLAG(
    bool, sqlite_synchronous_full, false,
    "fsync every commit (survives power loss; much slower). Default: commits "
    "survive a server crash");
ABSL_FLAG(int64_t, heartbeat_bases_mb,
          ServerConfig().heartbeat_bases_bytes >> 20,
          "Agents send reports whose content did not change in a short "
          "heartbeat form, rebuilt from the host's last report sent whole: at "
          "most this many MiB of those held in memory (others are read from "
          "the store). 0: heartbeat forms not accepted");
ABSL_FLAG(absl::Duration, full_report_interval,
          ServerConfig().full_report_interval,
          "A report whose material content (predictions beyond 5 %, risk, "
          "kernel, config, labels, health, ...) equals the host's stored one "
          "is stored as a heartbeat of a few bytes; a full report at least "
          "this often per host. 0: store every report whole");
ABSL_FLAG(
    double, host_report_rate, ServerConfig().host_report_rate,
    "Reports per second one host may send (token bucket; 0 = unlimited). Over "
    "it, the stream ends with RESOURCE_EXHAUSTED and the agent retries later");
ABSL_FLAG(double, host_report_burst, ServerConfig().host_report_burst,
          "Token bucket size of --host_report_rate");
ABSL_FLAG(int64_t, writer_queue, ServerConfig().writer_queue,
          "Reports queued for the writer at most (bounds memory: streams wait "
          "when full)");

ABSL_FLAG(std::string, metrics_host_min_risk, "latency",
          "/metrics has series of their own only for hosts whose worst risk "
          "is at least this (unknown = every host, none, latency, warning, "
          "stall), and for stale hosts and hosts whose agent drops reports; "
          "the fleet's aggregates cover every host");
ABSL_FLAG(int64_t, metrics_max_hosts, ServerConfig().metrics_max_hosts,
          "At most this many hosts with series of their own on /metrics, "
          "worst first (0: none)");
ABSL_FLAG(int32_t, max_agent_streams, 0,
          "Agent report streams served at once (agents sending now; an "
          "idle agent holds a connection, no stream); beyond, a new stream "
          "is refused with RESOURCE_EXHAUSTED and the agent retries later. "
          "0: the open-file limit less two per --http_max_connections and "
          "256, as many as there can be agent connections (a new connection "
          "is refused while fewer descriptors than that reserve are left)");
ABSL_FLAG(std::string, grpc_args, "",
          "gRPC channel arguments of the server, name=integer, "
          "comma-separated (e.g. grpc.keepalive_time_ms=60000); they replace "
          "the server's own settings of the same name");
ABSL_FLAG(int32_t, query_scan_threads, ServerConfig().query_scan_threads,
          "Threads a fleet-wide PredictAttach scans the hosts with");

ABSL_FLAG(std::string, alert_rules, "",
          "YAML alert rules (deploy/alerts/rules.yaml); empty: no server-side "
          "alerting");
ABSL_FLAG(std::string, alertmanager_url, "",
          "Alertmanager base URL(s), comma-separated (http://am1:9093,"
          "http://am2:9093): firing and resolved alerts are posted to the v2 "
          "API of each; list every instance, not a load balancer");
ABSL_FLAG(absl::Duration, alert_eval_interval,
          ServerConfig().alert_eval_interval,
          "How often `for` timers and host-silence rules are evaluated");
ABSL_FLAG(absl::Duration, alert_resend_interval,
          ServerConfig().alert_resend_interval,
          "How often firing alerts are re-sent to Alertmanager");
ABSL_FLAG(int64_t, alertmanager_max_batch_alerts,
          ServerConfig().alertmanager_max_batch_alerts,
          "Alerts in one post to Alertmanager at most (posts are also at "
          "most 1 MiB)");
ABSL_FLAG(int64_t, alertmanager_max_alerts,
          ServerConfig().alertmanager_max_alerts,
          "Alerts tracked for each Alertmanager at most; past it a new alert "
          "evicts the longest-resolved one or is not sent (counted in "
          "tracehealth_alertmanager_alerts_dropped_total)");

namespace tracehealth::server {
namespace {

// Each HTTP connection holds two descriptors (its socket and the request
// timeout's duplicate): take the hard limit, not the usual soft 1024.
void RaiseFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "tracehealth-server: %s\n", what.c_str());
  return 1;
}

int Main(const sigset_t& sigs) {
  ServerConfig config;
  config.listen = absl::GetFlag(FLAGS_listen);
  config.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  config.store = absl::GetFlag(FLAGS_store);
  config.data_dir = absl::GetFlag(FLAGS_data_dir);
  config.postgres_dsn = absl::GetFlag(FLAGS_postgres_dsn);
  config.postgres_partition_span = absl::GetFlag(FLAGS_postgres_partition_span);
  config.feed_interval = absl::GetFlag(FLAGS_feed_interval);
  config.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  config.max_connection_age_grace =
      absl::GetFlag(FLAGS_max_connection_age_grace);
  config.replica_name = absl::GetFlag(FLAGS_replica_name);
  config.port_file = absl::GetFlag(FLAGS_port_file);
  absl::StatusOr<absl::Duration> retention =
      ParseRetention(absl::GetFlag(FLAGS_retention));
  if (!retention.ok()) return Fail(std::string(retention.status().message()));
  config.retention = *retention;
  absl::StatusOr<absl::Duration> rollup_retention =
      ParseRetention(absl::GetFlag(FLAGS_rollup_retention));
  if (!rollup_retention.ok()) {
    return Fail(absl::StrCat("--rollup_retention: ",
                             rollup_retention.status().message()));
  }
  config.rollup_retention = *rollup_retention;
  config.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  config.query_token_file = absl::GetFlag(FLAGS_query_token_file);
  config.query_client_names = absl::GetFlag(FLAGS_query_client_names);
  config.metrics_require_token = absl::GetFlag(FLAGS_metrics_require_token);
  config.http_tls_cert = absl::GetFlag(FLAGS_http_tls_cert);
  config.http_tls_key = absl::GetFlag(FLAGS_http_tls_key);
  config.http_threads = absl::GetFlag(FLAGS_http_threads);
  config.http_idle_timeout = absl::GetFlag(FLAGS_http_idle_timeout);
  config.http_request_timeout = absl::GetFlag(FLAGS_http_request_timeout);
  config.http_max_connections = absl::GetFlag(FLAGS_http_max_connections);
  config.http_max_request_bytes = absl::GetFlag(FLAGS_http_max_request_bytes);
  config.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  config.max_report_bytes = absl::GetFlag(FLAGS_max_report_bytes);
  config.stale_after_intervals = absl::GetFlag(FLAGS_stale_after_intervals);
  config.sqlite_synchronous_full = absl::GetFlag(FLAGS_sqlite_synchronous_full);
  config.full_report_interval = absl::GetFlag(FLAGS_full_report_interval);
  if (absl::GetFlag(FLAGS_heartbeat_bases_mb) < 0)
    return Fail("--heartbeat_bases_mb must be >= 0");
  config.heartbeat_bases_bytes = absl::GetFlag(FLAGS_heartbeat_bases_mb) << 20;
  config.host_report_rate = absl::GetFlag(FLAGS_host_report_rate);
  config.host_report_burst = absl::GetFlag(FLAGS_host_report_burst);
  config.writer_queue = absl::GetFlag(FLAGS_writer_queue);
  config.alert_rules = absl::GetFlag(FLAGS_alert_rules);
  config.alertmanager_url = absl::GetFlag(FLAGS_alertmanager_url);
  config.alert_eval_interval = absl::GetFlag(FLAGS_alert_eval_interval);
  config.alert_resend_interval = absl::GetFlag(FLAGS_alert_resend_interval);
  config.alertmanager_max_batch_alerts =
      absl::GetFlag(FLAGS_alertmanager_max_batch_alerts);
  if (config.alertmanager_max_batch_alerts < 1) {
    return Fail("--alertmanager_max_batch_alerts: must be >= 1");
  }
  config.alertmanager_max_alerts = absl::GetFlag(FLAGS_alertmanager_max_alerts);
  if (config.alertmanager_max_alerts < 1) {
    return Fail("--alertmanager_max_alerts: must be >= 1");
  }
  const std::string min_risk = absl::GetFlag(FLAGS_metrics_host_min_risk);
  if (!v1::Risk_Parse("RISK_" + absl::AsciiStrToUpper(min_risk),
                      &config.metrics_host_min_risk)) {
    return Fail(absl::StrCat("--metrics_host_min_risk: unknown risk \"",
                             min_risk,
                             "\" (unknown, none, latency, warning, stall)"));
  }
  config.metrics_max_hosts = absl::GetFlag(FLAGS_metrics_max_hosts);
  if (config.metrics_max_hosts < 0) {
    return Fail("--metrics_max_hosts: must be >= 0");
  }
  config.max_agent_streams = absl::GetFlag(FLAGS_max_agent_streams);
  config.query_scan_threads = absl::GetFlag(FLAGS_query_scan_threads);
  for (absl::string_view arg : absl::StrSplit(absl::GetFlag(FLAGS_grpc_args),
                                              ',', absl::SkipWhitespace())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(arg, '=');
    int value = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &value)) {
      return Fail(
          absl::StrCat("--grpc_args: want name=integer, got \"", arg, "\""));
    }
    config.grpc_args.emplace_back(kv.first, value);
  }

  RaiseFileLimit();
  Server server(config);
  // On an error the destructor stops what had started.
  if (absl::Status st = server.Start(); !st.ok()) return Fail(st.ToString());
  int sig = 0;
  sigwait(&sigs, &sig);
  std::fprintf(stderr, "tracehealth-server: signal %d, draining\n", sig);
  server.Stop();
  std::fprintf(stderr, "tracehealth-server: stopped\n");
  return 0;
}

}  // namespace
}  // namespace tracehealth::server

constexpr char kUsage[] =
    "tracehealth-server: stores the reports of tracehealth agents, answers the "
    "FleetQuery API\n(predictions, what-ifs, hosts, alerts) and exports "
    "Prometheus /metrics.\n"
    "  tracehealth-server --data_dir=DIR [--listen=HOST:PORT] "
    "[--metrics_listen=HOST:PORT]\n"
    "      [--alert_rules=FILE] [--tls_cert=PEM --tls_key=PEM "
    "[--tls_client_ca=PEM]] [--query_token_file=FILE]";

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  if (tracehealth::WantsHelp(argc, argv)) {
    std::cout << tracehealth::FlagHelp(kUsage, {"server/main.cc"});
    return 0;
  }
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
