// Server: the tracehealth-server program's parts, built and run in order.
//
// Start() opens the store (migrating it; a SQLite store's data directory
// is locked first, one server each), reads the alert rules, rebuilds the
// latest-state index from the store (seeding what `increased` rules
// compare with; on PostgreSQL it then follows the other replicas' commits),
// restores the stored alerts, then starts the report writer, the
// gRPC services (ingest and query), the HTTP /metrics exposer and the
// housekeeper (retention, storage gauges), and finally writes the port file.
// Stop() drains: streams stop reading, the gRPC server shuts down (streams
// still reading are cancelled after 5 s), the writer commits and publishes
// what it was given, then alerting, the housekeeper and the HTTP server stop.
//
// After each commit the writer's publisher thread calls OnCommitted, which
// runs what follows a commit in the order it needs (server/post_commit.h).
//
// Thread safety: construct, Start, Stop and destroy on one thread. The
// address accessors may be called from any thread after Start returned OK.
// OnCommitted runs on the writer's publisher thread ("ingest-publish"), one
// batch at a time.
#ifndef TRACEHEALTH_SERVER_SERVER_H_
#define TRACEHEALTH_SERVER_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "server/calibration/calibration_intake.h"
#include "server/calibration/class_calibrations.h"
#include "server/index/host_index.h"
#include "server/ingest/heartbeat_bases.h"
#include "server/ingest/report_writer.h"
#include "server/metrics/host_collector.h"
#include "server/metrics/server_metrics.h"
#include "server/query/query_service.h"
#include "server/report/committed_report.h"

namespace grpc {
class Server;
class ServerCredentials;
}  // namespace grpc

namespace prometheus {
class Collectable;
}  // namespace prometheus

namespace tracehealth::server {

class AlertStore;
class AlertTransitions;
class Alerting;
class DataDirLock;
class DescriptorGuard;
class ChangeFeed;
class ChangeFollower;
class ClassRefresher;
class EventRecorder;
class EventStore;
class CalibrationStore;
class Housekeeper;
class HttpServer;
class Router;
class IngestService;
class LeaseStore;
class PostCommit;
class QueryService;
class ReportPricer;
class ReportStore;

// Everything the server's flags configure (server/main.cc documents each).
struct ServerConfig {
  // host:port; port 0 picks a free one.
  std::string listen = "127.0.0.1:7443";
  // The HTTP port: /metrics, /api/v1 and the fleet page.
  std::string metrics_listen = "127.0.0.1:9464";
  // "sqlite" (one server; data_dir) or "postgres" (one or several
  // replicas on one database; postgres_dsn).
  std::string store = "sqlite";
  // The directory of the SQLite store (tracehealth.db); required for it.
  std::string data_dir;
  // libpq DSN of the PostgreSQL store; required for it. A multi-host DSN
  // with target_session_attrs=read-write follows a failover.
  std::string postgres_dsn;
  absl::Duration postgres_partition_span = absl::Hours(24);
  // How often a PostgreSQL replica polls for the other replicas' commits.
  absl::Duration feed_interval = absl::Milliseconds(250);
  // How often a PostgreSQL replica loads the calibrations other replicas
  // stored (server/calibration/class_refresher.h).
  absl::Duration class_refresh_interval = absl::Seconds(1);
  // gRPC connections are told to go away after this age (gRPC adds +-10%
  // jitter) and closed after the grace, so agents behind an L4 balancer
  // spread over the replicas again. Zero: never.
  absl::Duration max_connection_age = absl::ZeroDuration();
  absl::Duration max_connection_age_grace = absl::Seconds(30);
  // This replica's name in leases; empty: HOSTNAME:PID.
  std::string replica_name;
  // When set, written once both listen: "grpc=HOST:PORT\nmetrics=HOST:PORT\n".
  std::string port_file;
  absl::Duration retention = absl::Hours(24 * 30);
  // Hourly rollups (server/storage/rollup.h) are kept this long (by hour
  // start); the housekeeper rolls hours up before it deletes reports.
  absl::Duration rollup_retention = absl::Hours(24 * 400);
  // PEM files. Certificate and key enable TLS; a client CA requires client
  // certificates, whose CN or DNS SAN is the only host a client may report.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // File holding the bearer token the query API requires; empty: none.
  // The HTTP side's /api/v1 requires the same token.
  std::string query_token_file;
  // RE2 pattern a client certificate's CN or SAN must match in full to use
  // the gRPC query API (needs tls_client_ca); empty: any client may.
  std::string query_client_names;
  // /metrics requires the token too.
  bool metrics_require_token = false;
  // PEM files of the HTTP port's certificate and key: HTTPS only.
  std::string http_tls_cert;
  std::string http_tls_key;
  int http_threads = 4;
  absl::Duration http_idle_timeout = absl::Seconds(30);
  absl::Duration http_request_timeout = absl::Seconds(10);
  int http_max_connections = 1024;
  int64_t http_max_request_bytes = 64 << 10;
  int64_t max_message_bytes = 4 << 20;
  int64_t max_report_bytes = 1 << 20;
  double stale_after_intervals = 3;
  bool sqlite_synchronous_full = false;
  // A report materially equal to its host's stored one is stored as a
  // heartbeat; a full report at least this often (0: every report whole).
  absl::Duration full_report_interval = absl::Hours(6);
  // Heartbeat forms from agents (report.proto HeartbeatForm): at most this
  // many bytes of parsed base reports held (server/ingest/heartbeat_bases.h;
  // a base not held is read from the store). 0: forms not accepted.
  int64_t heartbeat_bases_bytes = 256 << 20;
  // Per-host token bucket (reports/s, 0 = unlimited; burst).
  double host_report_rate = 10;
  double host_report_burst = 600;
  int64_t writer_queue = 4096;
  // YAML alert rules; empty: no server-side alerting.
  std::string alert_rules;
  // Alertmanager base URLs, comma-separated (each is posted to); empty:
  // alerts are only stored and exported.
  std::string alertmanager_url;
  absl::Duration alert_eval_interval = absl::Seconds(5);
  absl::Duration alert_resend_interval = absl::Minutes(1);
  // Alerts in one post to Alertmanager at most (also at most 1 MiB).
  int64_t alertmanager_max_batch_alerts = 1000;
  // Alerts tracked for each Alertmanager at most (AlertmanagerNotifier's
  // max_alerts): room for every host of a 100,000-host fleet alerting on
  // three rules at once (a risk, a stall, silence).
  int64_t alertmanager_max_alerts = 300000;
  // /metrics: per-host series only for hosts at or above this worst risk
  // (and stale or dropping ones), at most metrics_max_hosts of them, worst
  // first (server/metrics/host_collector.h).
  v1::Risk metrics_host_min_risk = v1::RISK_LATENCY;
  int64_t metrics_max_hosts = 1000;
  // Agent report streams served at once (agents sending now; idle ones
  // hold a connection and no stream); beyond, new ones are refused with
  // RESOURCE_EXHAUSTED. 0: DefaultMaxAgentStreams of the open-file limit.
  // Independently, a stream on a new connection is refused while fewer than
  // AgentDescriptorReserve descriptors are left (DescriptorGuard).
  int max_agent_streams = 0;
  // Threads a fleet-wide PredictAttach scans the index with.
  int query_scan_threads = 2;
  // gRPC channel arguments (integer valued) set on the server after the
  // ones it sets itself (GrpcServerArgs), e.g. {"grpc.http2.bdp_probe", 1}.
  std::vector<std::pair<std::string, int>> grpc_args;
};

// Descriptors kept from agent connections: two per HTTP connection allowed
// and 256 for the store, the listeners, query clients and Alertmanager.
int64_t AgentDescriptorReserve(int http_max_connections);

// The agent streams a server with `open_files` descriptors (RLIMIT_NOFILE)
// serves at once: as many as there can be agent connections (a stream needs
// its connection, one descriptor), `open_files` less
// AgentDescriptorReserve; at least 16. So by default every connected agent
// may send at the same time, and the descriptors, not this limit, bound the
// agents a server holds; a lower --max_agent_streams bounds the memory of
// concurrent sends (a stream adds about 15 kB to its connection).
int DefaultMaxAgentStreams(uint64_t open_files, int http_max_connections);

class Server {
 public:
  // What the server needs of its surroundings; tests replace both.
  struct Env {
    // Receives each log line without the "tracehealth-server: " prefix
    // and newline; by default they go to stderr with the prefix. Called
    // from Start's thread and from OnCommitted's.
    std::function<void(const std::string& line)> log;
    // The clock of the commit-failure log's rate limit.
    std::function<absl::Time()> now = [] { return absl::Now(); };
  };

  explicit Server(ServerConfig config);
  Server(ServerConfig config, Env env);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Starts everything (see the top of this file); call once. Errors, each
  // naming what failed: an unknown store, no data_dir (SQLite) or DSN
  // (PostgreSQL), an unreadable token file, a bad query_client_names
  // pattern or one without tls_client_ca, TLS credentials, the data
  // directory (missing, or in use by another server: DataDirLock), the store
  // (cannot open, connect, migrate or load; nothing listens yet), alert rules
  // (unreadable, invalid, stored alerts unreadable), a listen address
  // (Unavailable), the port file. After an error, Stop (or the destructor)
  // undoes what was started.
  absl::Status Start();

  // Drains and stops (see the top of this file). Idempotent.
  void Stop();

  // The bound addresses, HOST:PORT with the port actually bound.
  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& metrics_address() const { return metrics_address_; }

  // What follows each commit (server/post_commit.h: priced once, then the
  // alert rules, the event recorder, the index, the counters). Requires a
  // successful Start.
  void OnCommitted(absl::Span<const CommittedReport> stored,
                   const BatchStats& stats);

 private:
  // The steps of Start, in order.
  absl::Status OpenBackend();
  template <typename T>
  void UseStore(std::unique_ptr<T> store);
  std::string ReplicaName() const;
  absl::Status MakeAlerting();
  absl::Status LoadIndex();
  absl::Status StartServing(
      const std::shared_ptr<grpc::ServerCredentials>& creds,
      QueryOptions query_options);
  absl::Status StartHttp(const std::string& token);
  HostMetricsOptions MetricsOptions() const;
  absl::Status WritePortFile() const;

  const ServerConfig config_;
  const Env env_;

  // Declared in the order Start builds them, so that they are destroyed in
  // the reverse order.
  std::unique_ptr<DataDirLock> data_dir_lock_;  // SQLite; after the store
  // The store: one object implementing every storage interface.
  std::shared_ptr<void> store_owner_;
  ReportStore* reports_ = nullptr;
  AlertStore* alerts_ = nullptr;
  AlertTransitions* transitions_ = nullptr;
  EventStore* events_ = nullptr;
  CalibrationStore* calibrations_ = nullptr;
  LeaseStore* leases_ = nullptr;  // null for SQLite: one server
  ChangeFeed* feed_ = nullptr;    // null for SQLite: one writer
  // Loaded from `calibrations_` at start and grown by SubmitCalibration on
  // this server; on PostgreSQL the refresher loads the other replicas'
  // every class_refresh_interval.
  ClassCalibrations classes_;
  std::unique_ptr<ClassRefresher> class_refresher_;
  std::unique_ptr<CalibrationIntake> calibration_intake_;
  std::unique_ptr<HeartbeatBases> heartbeat_bases_;
  HostIndex index_{&classes_};
  std::unique_ptr<ChangeFollower> follower_;
  std::unique_ptr<Alerting> alerting_;
  ServerMetrics metrics_;
  std::unique_ptr<EventRecorder> recorder_;
  std::unique_ptr<ReportPricer> pricer_;
  std::unique_ptr<PostCommit> post_commit_;
  std::unique_ptr<ReportWriter> writer_;
  std::unique_ptr<DescriptorGuard> descriptors_;  // before ingest_
  std::unique_ptr<IngestService> ingest_;
  std::unique_ptr<QueryService> query_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<Housekeeper> housekeeper_;
  // What /metrics collects, in this order.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> http_;
  std::string grpc_address_;
  std::string metrics_address_;
  bool stopped_ = false;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_SERVER_H_
