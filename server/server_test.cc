#include "server/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/report/stored_report.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

// Log lines and a clock the test sets.
class TestEnv {
 public:
  Server::Env env() {
    Server::Env e;
    e.log = [this](const std::string& line) {
      absl::MutexLock lock(&mu_);
      lines_.push_back(line);
    };
    e.now = [this] {
      absl::MutexLock lock(&mu_);
      return now_;
    };
    return e;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  // The lines that start with `prefix`.
  std::vector<std::string> Lines(absl::string_view prefix) {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const std::string& l : lines_) {
      if (absl::StartsWith(l, prefix)) out.push_back(l);
    }
    return out;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
  absl::Time now_ ABSL_GUARDED_BY(mu_) = absl::UnixEpoch();
};

ServerConfig LoopbackConfig() {
  ServerConfig c;
  c.listen = "127.0.0.1:0";
  c.metrics_listen = "127.0.0.1:0";
  c.data_dir = testing::NewTempDir("server");
  return c;
}

std::string Scrape(const Server& server) {
  absl::StatusOr<std::string> text =
      testing::HttpGet(server.metrics_address(), "/metrics");
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

// `line` ("name{labels} value") is one of the lines of `metrics`.
bool HasLine(const std::string& metrics, const std::string& line) {
  return absl::StrContains(absl::StrCat("\n", metrics),
                           absl::StrCat("\n", line, "\n"));
}

CommittedReport Report(const std::string& host, uint64_t seq, uint64_t dropped,
                       absl::Time received_at) {
  v1::HostReport r;
  r.set_host_id(host);
  r.set_seq(seq);
  r.set_interval_seconds(15);
  r.mutable_health()->set_spool_dropped_total(dropped);
  return {StoredReport::Of(r), received_at};
}

BatchStats Stored(size_t reports, size_t stored) {
  BatchStats s;
  s.reports = reports;
  s.stored = stored;
  s.duplicates = reports - stored;
  s.commit_time = absl::Milliseconds(2);
  return s;
}

TEST(DefaultMaxAgentStreamsTest, OneDescriptorEachAfterTheReserve) {
  // 20,000 descriptors, 1,024 HTTP connections: 20,000 - 2 * 1,024 - 256.
  EXPECT_EQ(DefaultMaxAgentStreams(20000, 1024), 17696);
  // 1,024 descriptors, 300 HTTP connections: 1,024 - 600 - 256 = 168.
  EXPECT_EQ(DefaultMaxAgentStreams(1024, 300), 168);
  // The floor: 16 once the reserve takes (nearly) everything.
  EXPECT_EQ(DefaultMaxAgentStreams(872, 300), 16);  // 872 - 856 = 16
  EXPECT_EQ(DefaultMaxAgentStreams(871, 300), 16);  // 15, raised to 16
  EXPECT_EQ(DefaultMaxAgentStreams(873, 300), 17);
  EXPECT_EQ(DefaultMaxAgentStreams(100, 1024), 16);
  // RLIM_INFINITY: capped at INT_MAX before the reserve is taken.
  EXPECT_EQ(DefaultMaxAgentStreams(~uint64_t{0}, 0), 2147483647 - 256);
}

TEST(ServerTest, StartsOnLoopbackWritesThePortFileAndStops) {
  ServerConfig config = LoopbackConfig();
  config.port_file = testing::NewTempDir("ports") + "/ports";
  TestEnv env;
  Server server(config, env.env());
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(absl::StartsWith(server.grpc_address(), "127.0.0.1:"));
  ASSERT_TRUE(absl::StartsWith(server.metrics_address(), "127.0.0.1:"));
  EXPECT_NE(server.grpc_address(), "127.0.0.1:0");
  EXPECT_NE(server.metrics_address(), "127.0.0.1:0");
  absl::StatusOr<std::string> ports = testing::ReadFile(config.port_file);
  ASSERT_TRUE(ports.ok()) << ports.status();
  EXPECT_EQ(*ports, absl::StrCat("grpc=", server.grpc_address(),
                                 "\nmetrics=", server.metrics_address(), "\n"));
  EXPECT_EQ(env.Lines("0 hosts loaded in ").size(), 1u);
  EXPECT_EQ(env.Lines("0 alert rules").size(), 1u);
  EXPECT_EQ(env.Lines(absl::StrCat("grpc=", server.grpc_address(),
                                   " metrics=", server.metrics_address(),
                                   " data=", config.data_dir))
                .size(),
            1u);
  EXPECT_TRUE(HasLine(Scrape(server), "tracehealth_alert_rules 0"));
  server.Stop();
  server.Stop();  // idempotent
  EXPECT_FALSE(testing::HttpGet(server.metrics_address(), "/metrics").ok());
}

TEST(ServerTest, ASecondServerOnTheDataDirectoryIsRefused) {
  ServerConfig config = LoopbackConfig();
  TestEnv env;
  auto first = std::make_unique<Server>(config, env.env());
  ASSERT_TRUE(first->Start().ok());
  Server second(config, env.env());
  absl::Status st = second.Start();
  EXPECT_TRUE(absl::IsUnavailable(st)) << st;
  EXPECT_EQ(
      st.message(),
      absl::StrCat("data directory ", config.data_dir,
                   " is in use by another tracehealth-server (pid ", getpid(),
                   ", holding ", config.data_dir, "/tracehealth.lock)"));
  // The lock goes with the first server.
  first.reset();
  Server third(config, env.env());
  EXPECT_TRUE(third.Start().ok());
}

TEST(ServerTest, AlertRulesSeeTheHostsPreviousReportBeforeTheIndexTakesTheNew) {
  ServerConfig config = LoopbackConfig();
  config.alert_rules = config.data_dir + "/rules.yaml";
  ASSERT_TRUE(testing::WriteFile(config.alert_rules, R"(
rules:
  - name: Dropping
    condition: health.spool_dropped_total increased
)")
                  .ok());
  Server server(config);
  ASSERT_TRUE(server.Start().ok());
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  // Two commits, one report each: the second is compared with the first,
  // which only the index holds by then.
  server.OnCommitted({Report("h1", 1, 0, t0)}, Stored(1, 1));
  std::string metrics = Scrape(server);
  EXPECT_FALSE(absl::StrContains(metrics, "alertname=\"Dropping\"")) << metrics;
  EXPECT_TRUE(HasLine(
      metrics,
      "tracehealth_host_last_report_timestamp_seconds{host=\"h1\"} 1000"))
      << metrics;
  // 0 -> 3 dropped; the batch also held two duplicates.
  server.OnCommitted({Report("h1", 2, 3, t0 + absl::Seconds(15))},
                     Stored(3, 1));
  metrics = Scrape(server);
  EXPECT_TRUE(
      HasLine(metrics,
              "tracehealth_alerts{alertname=\"Dropping\",alertstate=\"firing\","
              "host=\"h1\",severity=\"warning\"} 1"))
      << metrics;
  // Then the index took the new report: last seen 1000 + 15 s.
  EXPECT_TRUE(HasLine(
      metrics,
      "tracehealth_host_last_report_timestamp_seconds{host=\"h1\"} 1015"))
      << metrics;
  // And the counters: stored 1 + 1, duplicates 0 + 2, two commits of 1 + 3
  // reports.
  EXPECT_TRUE(HasLine(metrics,
                      "tracehealth_ingest_reports_total{result=\"stored\"} 2"));
  EXPECT_TRUE(HasLine(
      metrics, "tracehealth_ingest_reports_total{result=\"duplicate\"} 2"));
  EXPECT_TRUE(HasLine(metrics, "tracehealth_ingest_batch_reports_count 2"));
  EXPECT_TRUE(HasLine(metrics, "tracehealth_ingest_batch_reports_sum 4"));
  EXPECT_TRUE(HasLine(metrics, "tracehealth_ingest_commit_failures_total 0"));
}

TEST(ServerTest, CommitFailuresAreCountedAndLoggedAtMostOnceAMinute) {
  TestEnv env;
  Server server(LoopbackConfig(), env.env());
  ASSERT_TRUE(server.Start().ok());
  BatchStats failed;
  failed.reports = 5;
  failed.failed = true;
  failed.error = absl::UnavailableError("database is locked");
  const absl::Time t0 = absl::FromUnixSeconds(5000);
  const std::string logged =
      "storing 5 reports failed: UNAVAILABLE: database is locked";
  env.Set(t0);
  server.OnCommitted({}, failed);
  EXPECT_EQ(env.Lines("storing "),
            std::vector<std::string>{
                logged + " (0 more failures since the last message)"});
  // Within the minute: counted, not logged.
  env.Set(t0 + absl::Seconds(30));
  server.OnCommitted({}, failed);
  env.Set(t0 + absl::Seconds(60) - absl::Milliseconds(1));
  server.OnCommitted({}, failed);
  EXPECT_EQ(env.Lines("storing ").size(), 1u);
  // A minute after the last message: logged with the two in between.
  env.Set(t0 + absl::Seconds(60));
  server.OnCommitted({}, failed);
  // The next minute counts from that message.
  env.Set(t0 + absl::Seconds(119));
  server.OnCommitted({}, failed);
  EXPECT_EQ(env.Lines("storing "),
            (std::vector<std::string>{
                logged + " (0 more failures since the last message)",
                logged + " (2 more failures since the last message)"}));
  std::string metrics = Scrape(server);
  EXPECT_TRUE(HasLine(metrics, "tracehealth_ingest_commit_failures_total 5"))
      << metrics;
  // A failed commit stores nothing and is no commit of the histogram.
  EXPECT_TRUE(HasLine(metrics,
                      "tracehealth_ingest_reports_total{result=\"stored\"} 0"));
  EXPECT_TRUE(HasLine(metrics, "tracehealth_ingest_batch_reports_count 0"));
}

// A socket listening on a loopback port without SO_REUSEPORT, so that no
// one else can bind the port.
class TakenPort {
 public:
  TakenPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&sa), len) == 0 &&
        listen(fd_, 1) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len) == 0) {
      port_ = ntohs(sa.sin_port);
    }
  }
  ~TakenPort() { close(fd_); }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// One way to make Start fail, and the error it must give.
struct StartFailure {
  std::string what;
  // Breaks a working configuration (`taken` is a port no one can bind).
  std::function<void(ServerConfig& c, const std::string& taken)> breaks;
  absl::StatusCode code;
  // The message, or (with `prefix`) how it starts.
  std::function<std::string(const ServerConfig& c, const std::string& taken)>
      message;
  bool prefix = false;
};

TEST(ServerTest, StartNamesWhatFailed) {
  using C = ServerConfig;
  using S = const std::string&;
  const std::vector<StartFailure> failures = {
      {"no data dir", [](C& c, S) { c.data_dir = ""; },
       absl::StatusCode::kInvalidArgument,
       [](const C&, S) { return "--data_dir is required"; }},
      {"unknown store", [](C& c, S) { c.store = "mysql"; },
       absl::StatusCode::kInvalidArgument,
       [](const C&, S) { return "--store=mysql: want sqlite or postgres"; }},
      {"postgres without a DSN", [](C& c, S) { c.store = "postgres"; },
       absl::StatusCode::kInvalidArgument,
       [](const C&, S) {
         return "--postgres_dsn is required with --store=postgres";
       }},
      // Nothing listens on port 1: the DSN is named (without its password)
      // and nothing of the server has started.
      {"postgres unreachable",
       [](C& c, S) {
         c.store = "postgres";
         c.postgres_dsn =
             "host=127.0.0.1 port=1 dbname=th user=th password=s3cret";
       },
       absl::StatusCode::kUnavailable,
       [](const C&, S) {
         return "postgres: cannot connect (host=127.0.0.1 port=1 dbname=th "
                "user=th): connection to server at \"127.0.0.1\", port 1 "
                "failed: Connection refused";
       },
       true},
      {"no token",
       [](C& c, S) { c.query_token_file = c.data_dir + "/no-token"; },
       absl::StatusCode::kInvalidArgument,
       [](const C& c, S) {
         return c.data_dir + "/no-token: cannot read a token";
       }},
      {"client names without client certificates",
       [](C& c, S) { c.query_client_names = "ops-.*"; },
       absl::StatusCode::kInvalidArgument,
       [](const C&, S) {
         return "--query_client_names needs --tls_client_ca (client "
                "certificates)";
       }},
      {"bad client names",
       [](C& c, S) {
         c.query_client_names = "ops-(";
         c.tls_client_ca = c.data_dir + "/ca.pem";
       },
       absl::StatusCode::kInvalidArgument,
       [](const C&, S) {
         return "--query_client_names: bad pattern \"ops-(\": ";
       },
       true},
      // Compiled as given and matched whole: wrapped as ^(?:...)$ it would
      // be another, valid pattern.
      {"client names that close the group",
       [](C& c, S) {
         c.query_client_names = "a)|(b";
         c.tls_client_ca = c.data_dir + "/ca.pem";
       },
       absl::StatusCode::kInvalidArgument,
       [](const C&, S) {
         return "--query_client_names: bad pattern \"a)|(b\": ";
       },
       true},
      {"TLS", [](C& c, S) { c.tls_cert = c.data_dir + "/cert.pem"; },
       absl::StatusCode::kInvalidArgument,
       [](const C&, S) { return "TLS: --tls_cert and --tls_key go together"; }},
      {"data dir is a file",
       [](C& c, S) {
         ASSERT_TRUE(testing::WriteFile(c.data_dir + "/file", "x").ok());
         c.data_dir += "/file";
       },
       absl::StatusCode::kFailedPrecondition,
       [](const C& c, S) {
         return "data directory " + c.data_dir + " is not a directory";
       }},
      {"no data dir", [](C& c, S) { c.data_dir += "/missing"; },
       absl::StatusCode::kNotFound,
       [](const C& c, S) {
         return "data directory " + c.data_dir + " does not exist";
       }},
      {"no rules file",
       [](C& c, S) { c.alert_rules = c.data_dir + "/missing.yaml"; },
       absl::StatusCode::kInvalidArgument,
       [](const C& c, S) { return c.data_dir + "/missing.yaml: cannot read"; }},
      {"bad rules",
       [](C& c, S) {
         c.alert_rules = c.data_dir + "/bad.yaml";
         ASSERT_TRUE(testing::WriteFile(c.alert_rules,
                                        "rules:\n  - name: NoCondition\n")
                         .ok());
       },
       absl::StatusCode::kInvalidArgument,
       [](const C& c, S) { return c.alert_rules + ": "; }, true},
      {"gRPC port taken", [](C& c, S taken) { c.listen = taken; },
       absl::StatusCode::kUnavailable,
       [](const C&, S taken) {
         return "cannot listen on " + taken + " (--listen): " + taken +
                ": Address already in use";
       }},
      {"metrics port taken", [](C& c, S taken) { c.metrics_listen = taken; },
       absl::StatusCode::kUnavailable,
       [](const C&, S taken) { return "cannot listen on " + taken + ": "; },
       true},
      {"port file",
       [](C& c, S) { c.port_file = c.data_dir + "/no/such/dir/ports"; },
       absl::StatusCode::kNotFound,
       [](const C& c, S) {
         return c.data_dir +
                "/no/such/dir/ports.tmp: No such file or directory";
       }},
  };
  TakenPort taken;
  for (const StartFailure& f : failures) {
    SCOPED_TRACE(f.what);
    ServerConfig config = LoopbackConfig();
    f.breaks(config, taken.address());
    Server server(config);
    absl::Status st = server.Start();
    EXPECT_EQ(st.code(), f.code) << st;
    EXPECT_EQ(st.message().find("s3cret"), std::string::npos) << st;
    const std::string want = f.message(config, taken.address());
    if (f.prefix) {
      EXPECT_TRUE(absl::StartsWith(st.message(), want))
          << st << "\nwant: " << want;
    } else {
      EXPECT_EQ(st.message(), want);
    }
  }
}

}  // namespace
}  // namespace tracehealth::server
