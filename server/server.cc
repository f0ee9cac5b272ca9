#include "server/server.h"

#include <limits.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/read_file.h"
#include "common/status.h"
#include "common/write_file.h"
#include "grpcpp/grpcpp.h"
#include "re2/re2.h"
#include "server/alerts/alerting.h"
#include "server/alerts/rules.h"
#include "server/auth/server_credentials.h"
#include "server/calibration/class_refresher.h"
#include "server/data_dir_lock.h"
#include "server/events/event_recorder.h"
#include "server/grpc_server_args.h"
#include "server/housekeeper.h"
#include "server/http/http_server.h"
#include "server/http/router.h"
#include "server/index/change_follower.h"
#include "server/ingest/descriptor_guard.h"
#include "server/ingest/ingest_service.h"
#include "server/listen_probe.h"
#include "server/metrics/host_collector.h"
#include "server/metrics/process_collector.h"
#include "server/metrics/text_exposition.h"
#include "server/post_commit.h"
#include "server/query/query_service.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/web/api.h"
#include "server/web/pages.h"

namespace tracehealth::server {
namespace {

Server::Env WithDefaults(Server::Env env) {
  if (!env.log) {
    env.log = [](const std::string& line) {
      std::fprintf(stderr, "tracehealth-server: %s\n", line.c_str());
    };
  }
  if (!env.now) env.now = [] { return absl::Now(); };
  return env;
}

// The bearer token in `path` (surrounding whitespace dropped); "" when no
// file is configured.
absl::StatusOr<std::string> ReadToken(const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  std::string token = text.ok() ? std::string(absl::StripAsciiWhitespace(*text))
                                : std::string();
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot read a token"));
  }
  return token;
}

// --query_client_names, compiled as given (the query service matches a
// client's name whole, RE2::FullMatch); null when not set.
absl::StatusOr<std::shared_ptr<const re2::RE2>> ClientNamePattern(
    const std::string& pattern, const std::string& client_ca) {
  if (pattern.empty()) return std::shared_ptr<const re2::RE2>();
  if (client_ca.empty()) {
    return absl::InvalidArgumentError(
        "--query_client_names needs --tls_client_ca (client certificates)");
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(pattern, opts);
  if (!re->ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--query_client_names: bad pattern \"", pattern, "\": ", re->error()));
  }
  return re;
}

std::string HostPart(const std::string& addr) {
  size_t colon = addr.rfind(':');
  return colon == std::string::npos ? addr : addr.substr(0, colon);
}

}  // namespace

int64_t AgentDescriptorReserve(int http_max_connections) {
  return 2 * static_cast<int64_t>(http_max_connections) + 256;
}

int DefaultMaxAgentStreams(uint64_t open_files, int http_max_connections) {
  const int64_t reserved = AgentDescriptorReserve(http_max_connections);
  const int64_t left = static_cast<int64_t>(std::min<uint64_t>(
                           open_files, std::numeric_limits<int>::max())) -
                       reserved;
  return static_cast<int>(std::max<int64_t>(16, left));
}

Server::Server(ServerConfig config) : Server(std::move(config), Env()) {}

Server::Server(ServerConfig config, Env env)
    : config_(std::move(config)), env_(WithDefaults(std::move(env))) {}

Server::~Server() { Stop(); }

// Points every storage interface of the server at `store`.
template <typename T>
void Server::UseStore(std::unique_ptr<T> store) {
  reports_ = store.get();
  alerts_ = store.get();
  transitions_ = store.get();
  events_ = store.get();
  calibrations_ = store.get();
  store_owner_ = std::shared_ptr<T>(std::move(store));
}

absl::Status Server::Start() {
  if (config_.store != "sqlite" && config_.store != "postgres") {
    return absl::InvalidArgumentError(
        absl::StrCat("--store=", config_.store, ": want sqlite or postgres"));
  }
  if (config_.store == "sqlite" && config_.data_dir.empty()) {
    return absl::InvalidArgumentError("--data_dir is required");
  }
  if (config_.store == "postgres" && config_.postgres_dsn.empty()) {
    return absl::InvalidArgumentError(
        "--postgres_dsn is required with --store=postgres");
  }
  // Configuration the operator gets wrong is reported before the store is
  // touched.
  QueryOptions qopts;
  TH_ASSIGN_OR_RETURN(qopts.token, ReadToken(config_.query_token_file));
  TH_ASSIGN_OR_RETURN(
      qopts.client_names,
      ClientNamePattern(config_.query_client_names, config_.tls_client_ca));
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds =
      MakeServerCredentials(config_.tls_cert, config_.tls_key,
                            config_.tls_client_ca);
  if (!creds.ok()) return Annotate(creds.status(), "TLS");
  TH_RETURN_IF_ERROR(OpenBackend());
  // The rules are read before the index loads: the load seeds what their
  // `increased` conditions compare the next reports with.
  TH_RETURN_IF_ERROR(MakeAlerting());
  TH_RETURN_IF_ERROR(LoadIndex());
  TH_RETURN_IF_ERROR(alerting_->Start());
  const std::string token = qopts.token;
  TH_RETURN_IF_ERROR(StartServing(*creds, std::move(qopts)));
  Housekeeper::Options hopts;
  hopts.retention = config_.retention;
  hopts.rollup_retention = config_.rollup_retention;
  hopts.leases = leases_;
  hopts.lease_holder = ReplicaName();
  housekeeper_ =
      std::make_unique<Housekeeper>(reports_, &index_, &metrics_, hopts);
  housekeeper_->Start();
  TH_RETURN_IF_ERROR(StartHttp(token));
  env_.log(absl::StrCat(
      "grpc=", grpc_address_, " metrics=", metrics_address_,
      config_.store == "sqlite"
          ? absl::StrCat(" data=", config_.data_dir)
          : absl::StrCat(" store=postgres (", DescribeDsn(config_.postgres_dsn),
                         ") replica=", ReplicaName())));
  return WritePortFile();
}

std::string Server::ReplicaName() const {
  if (!config_.replica_name.empty()) return config_.replica_name;
  char host[HOST_NAME_MAX + 1] = {};
  gethostname(host, sizeof(host) - 1);
  return absl::StrCat(host, ":", getpid());
}

absl::Status Server::OpenBackend() {
  if (config_.store == "sqlite") {
    // One server per data directory: a second one would store replays twice.
    TH_ASSIGN_OR_RETURN(data_dir_lock_, DataDirLock::Acquire(config_.data_dir));
    SqliteOptions sopts;
    sopts.synchronous_full = config_.sqlite_synchronous_full;
    sopts.full_report_interval = config_.full_report_interval;
    TH_ASSIGN_OR_RETURN(
        std::unique_ptr<SqliteStorage> s,
        SqliteStorage::Open(config_.data_dir + "/tracehealth.db", sopts));
    UseStore(std::move(s));
    return absl::OkStatus();
  }
  PostgresOptions popts;
  popts.dsn = config_.postgres_dsn;
  popts.partition_span = config_.postgres_partition_span;
  popts.full_report_interval = config_.full_report_interval;
  TH_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStorage> s,
                      PostgresStorage::Open(popts));
  leases_ = s.get();
  feed_ = s.get();
  UseStore(std::move(s));
  return absl::OkStatus();
}

absl::Status Server::LoadIndex() {
  // Classes first: the index prices a host without a calibration of its
  // own with its class's constants as it loads it (HostIndex::LoadFrom).
  absl::Status classes = classes_.LoadFrom(*calibrations_);
  if (absl::IsDataLoss(classes)) {
    env_.log(absl::StrCat(classes.ToString(), " (skipped)"));
  } else if (!classes.ok()) {
    return classes;
  }
  absl::Time load_start = absl::Now();
  HostIndex::LoadStats stats;
  absl::Status loaded = index_.LoadFrom(*reports_, &stats);
  if (absl::IsDataLoss(loaded)) {
    env_.log(absl::StrCat(loaded.ToString(), " (host skipped)"));
  } else if (!loaded.ok()) {
    return loaded;
  }
  env_.log(absl::StrFormat(
      "%zu hosts loaded in %s: %zu from stored records, %zu rebuilt from "
      "reports (%zu stored without a record, %zu with a record not usable%s, "
      "%zu priced by their hardware class)",
      index_.size(), absl::FormatDuration(absl::Now() - load_start),
      stats.from_records, stats.from_reports, stats.without_record,
      stats.unusable_records,
      stats.first_unusable.ok() ? "" : ": " + stats.first_unusable.ToString(),
      stats.class_priced));
  if (feed_ != nullptr) {
    // The feed started when the store opened, before the load: nothing
    // another replica commits from then on is missed.
    follower_ = std::make_unique<ChangeFollower>(
        feed_, &index_, config_.feed_interval, env_.log);
    follower_->Start();
    // A shared store: the other replicas' calibrations too.
    class_refresher_ = std::make_unique<ClassRefresher>(
        calibrations_, &classes_, config_.class_refresh_interval, env_.log);
    class_refresher_->Start();
  }
  return absl::OkStatus();
}

absl::Status Server::MakeAlerting() {
  std::vector<AlertRule> rules;
  if (!config_.alert_rules.empty()) {
    absl::StatusOr<std::string> yaml = ReadWholeFile(config_.alert_rules);
    if (!yaml.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(config_.alert_rules, ": cannot read"));
    }
    absl::StatusOr<std::vector<AlertRule>> parsed = ParseAlertRules(*yaml);
    if (!parsed.ok()) return Annotate(parsed.status(), config_.alert_rules);
    rules = *std::move(parsed);
  }
  Alerting::Options aopts;
  aopts.eval_interval = config_.alert_eval_interval;
  aopts.transitions = transitions_;
  aopts.metrics_max_hosts =
      static_cast<size_t>(std::max<int64_t>(0, config_.metrics_max_hosts));
  // Several URLs, comma-separated: every instance of an Alertmanager
  // cluster, each posted to.
  for (absl::string_view url :
       absl::StrSplit(config_.alertmanager_url, ',', absl::SkipEmpty())) {
    AlertmanagerNotifier::Options nopts;
    nopts.url = std::string(url);
    nopts.resend_interval = config_.alert_resend_interval;
    nopts.max_batch_alerts = config_.alertmanager_max_batch_alerts;
    nopts.max_alerts = static_cast<size_t>(config_.alertmanager_max_alerts);
    aopts.alertmanagers.push_back(nopts);
  }
  const size_t rule_count = rules.size();
  alerting_ =
      std::make_unique<Alerting>(std::move(rules), alerts_, &index_, aopts);
  env_.log(absl::StrCat(
      rule_count, " alert rules",
      aopts.alertmanagers.empty()
          ? ""
          : absl::StrCat(", delivering to ", aopts.alertmanagers.size(),
                         " Alertmanager(s)")));
  return absl::OkStatus();
}

absl::Status Server::StartServing(
    const std::shared_ptr<grpc::ServerCredentials>& creds, QueryOptions qopts) {
  recorder_ =
      std::make_unique<EventRecorder>(events_, reports_, &metrics_, env_.log);
  // One pricing of each committed batch for the rules, the recorder and the
  // index; each host's previous report read once.
  ReportPricer::Options popts;
  popts.classes = &classes_;
  popts.latest_seq = [this](const std::string& host) {
    return index_.LatestSeq(host);
  };
  popts.read_report = [this](const std::string& host, uint64_t seq) {
    return reports_->GetReport(host, seq);
  };
  pricer_ = std::make_unique<ReportPricer>(std::move(popts));
  post_commit_ = std::make_unique<PostCommit>(
      PostCommit::Parts{pricer_.get(), alerting_.get(), recorder_.get(),
                        &index_, &metrics_, env_.log, env_.now});
  ReportWriter::Options wopts;
  wopts.queue_capacity = static_cast<size_t>(config_.writer_queue);
  writer_ = std::make_unique<ReportWriter>(
      reports_, wopts,
      [this](absl::Span<const CommittedReport> stored, const BatchStats& s) {
        OnCommitted(stored, s);
      });
  IngestOptions iopts;
  iopts.limits.max_report_bytes = static_cast<size_t>(config_.max_report_bytes);
  iopts.require_client_identity = !config_.tls_client_ca.empty();
  iopts.host_reports_per_second = config_.host_report_rate;
  iopts.host_report_burst = config_.host_report_burst;
  calibration_intake_ =
      std::make_unique<CalibrationIntake>(calibrations_, &classes_, env_.now);
  iopts.calibrations = calibration_intake_.get();
  if (config_.heartbeat_bases_bytes > 0) {
    heartbeat_bases_ = std::make_unique<HeartbeatBases>(
        static_cast<size_t>(config_.heartbeat_bases_bytes),
        [this](const std::string& host, uint64_t seq) {
          return reports_->GetReport(host, seq);
        });
    iopts.heartbeat_bases = heartbeat_bases_.get();
  }
  iopts.max_streams = config_.max_agent_streams;
  if (iopts.max_streams <= 0) {
    rlimit lim{};
    const uint64_t files =
        getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 1024;
    iopts.max_streams =
        DefaultMaxAgentStreams(files, config_.http_max_connections);
  }
  DescriptorGuardOptions dopts;
  dopts.reserve = AgentDescriptorReserve(config_.http_max_connections);
  descriptors_ = std::make_unique<DescriptorGuard>(dopts);
  iopts.descriptors = descriptors_.get();
  env_.log(absl::StrCat("serving at most ", iopts.max_streams,
                        " agent streams; new agent connections refused with ",
                        dopts.reserve,
                        " descriptors left below the open-file limit"));
  ingest_ = std::make_unique<IngestService>(writer_.get(), &metrics_, iopts);
  qopts.stale_after_intervals = config_.stale_after_intervals;
  qopts.store = reports_;
  qopts.scan_threads = config_.query_scan_threads;
  qopts.events = events_;
  qopts.classes = &classes_;
  query_ = std::make_unique<QueryService>(&index_, alerts_, &metrics_, qopts);

  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort(config_.listen, creds, &grpc_port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config_.max_message_bytes));
  GrpcServerArgOptions aopts;
  aopts.max_connection_age = config_.max_connection_age;
  aopts.max_connection_age_grace = config_.max_connection_age_grace;
  aopts.overrides = config_.grpc_args;
  for (const auto& [name, value] : GrpcServerArgs(aopts)) {
    builder.AddChannelArgument(name, value);
  }
  builder.RegisterService(ingest_.get());
  builder.RegisterService(query_.get());
  grpc_server_ = builder.BuildAndStart();
  if (grpc_server_ == nullptr || grpc_port == 0) {
    const std::string why = ListenProbe(config_.listen);
    return absl::UnavailableError(absl::StrCat("cannot listen on ",
                                               config_.listen, " (--listen)",
                                               why.empty() ? "" : ": ", why));
  }
  grpc_address_ = absl::StrCat(HostPart(config_.listen), ":", grpc_port);
  return absl::OkStatus();
}

HostMetricsOptions Server::MetricsOptions() const {
  HostMetricsOptions o;
  o.stale_after_intervals = config_.stale_after_intervals;
  o.host_min_risk = config_.metrics_host_min_risk;
  o.max_hosts =
      static_cast<size_t>(std::max<int64_t>(0, config_.metrics_max_hosts));
  return o;
}

absl::Status Server::StartHttp(const std::string& token) {
  HttpServerOptions hopts;
  hopts.listen = config_.metrics_listen;
  hopts.threads = config_.http_threads;
  hopts.idle_timeout = config_.http_idle_timeout;
  hopts.request_timeout = config_.http_request_timeout;
  hopts.max_connections = config_.http_max_connections;
  hopts.max_request_bytes = static_cast<size_t>(config_.http_max_request_bytes);
  if (!config_.http_tls_cert.empty() || !config_.http_tls_key.empty()) {
    absl::StatusOr<std::string> cert = ReadWholeFile(config_.http_tls_cert);
    absl::StatusOr<std::string> key = ReadWholeFile(config_.http_tls_key);
    if (!cert.ok() || !key.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "HTTP TLS: cannot read ",
          !cert.ok() ? "--http_tls_cert " : "--http_tls_key ",
          !cert.ok() ? config_.http_tls_cert : config_.http_tls_key));
    }
    hopts.tls_cert_pem = *std::move(cert);
    hopts.tls_key_pem = *std::move(key);
  }
  collectables_ = {metrics_.registry(),
                   std::make_shared<HostCollector>(&index_, MetricsOptions()),
                   alerting_->collector(),
                   std::make_shared<ProcessCollector>()};
  router_ = std::make_unique<Router>(token);
  router_->Add({"GET", "/metrics", config_.metrics_require_token, false,
                [this](const HttpRequest&) {
                  HttpResponse r;
                  r.content_type = kMetricsContentType;
                  r.body = SerializeMetrics(collectables_);
                  return r;
                }});
  AddApiRoutes(query_.get(), router_.get());
  AddPageRoutes(router_.get());
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Start(
      hopts, [this](const HttpRequest& r) { return router_->Serve(r); });
  if (!http.ok()) return http.status();
  http_ = *std::move(http);
  metrics_address_ = http_->address();
  return absl::OkStatus();
}

absl::Status Server::WritePortFile() const {
  if (config_.port_file.empty()) return absl::OkStatus();
  return WriteFileAtomically(config_.port_file,
                             absl::StrCat("grpc=", grpc_address_,
                                          "\nmetrics=", metrics_address_, "\n"),
                             /*durable=*/false);
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  // Streams stop reading; the reports they have read are still committed
  // and acked below.
  if (ingest_ != nullptr) ingest_->BeginShutdown();
  // Streams whose reads are pending are cancelled at the deadline.
  if (grpc_server_ != nullptr) {
    grpc_server_->Shutdown(std::chrono::system_clock::now() +
                           std::chrono::seconds(5));
  }
  // Commits and publishes everything queued: OnCommitted runs for the last
  // time here, so alerting stops after it.
  if (writer_ != nullptr) writer_->Stop();
  if (alerting_ != nullptr) alerting_->Stop();
  if (housekeeper_ != nullptr) housekeeper_->Stop();
  if (follower_ != nullptr) follower_->Stop();
  if (class_refresher_ != nullptr) class_refresher_->Stop();
  if (http_ != nullptr) http_->Stop();
}

void Server::OnCommitted(absl::Span<const CommittedReport> stored,
                         const BatchStats& stats) {
  post_commit_->OnCommitted(stored, stats);
}

}  // namespace tracehealth::server
