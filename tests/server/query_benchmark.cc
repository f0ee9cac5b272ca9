// Query benchmark (prints figures; not a timed test): fills the real server
// with N hosts (one report each, through the ingest API), then measures
// over gRPC on loopback:
//  - PredictAttach for one host by id (stored prediction), one host and ten
//    hosts with a what-if (models re-run), and a label selector;
//  - the fleet-wide what-if (every host, threads=400000) and the fleet-wide
//    rollout plan with it (max_latency 2 s), p50/p99;
//  - the server's RSS per host (after every query above) and one /metrics
//    scrape: time, bytes, samples, RSS before, during and after;
//  - the restart to serving after kill -9 and after a clean stop.
//
//   bazel run -c opt //tests/server:query_benchmark -- --hosts=100000
//
// With --store=postgres the store is a PostgreSQL 15 cluster the benchmark
// starts (tests/util/postgres_cluster.h); a second replica on it answers
// the queries, its index filled from the first replica's commits through
// the change feed.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/server/server_process.h"
#include "tests/util/postgres_cluster.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"
#include "tools/loadgen/sample_report.h"

ABSL_FLAG(int32_t, hosts, 100000, "Hosts to store");
ABSL_FLAG(int32_t, queries, 5000, "Queries per single-host kind");
ABSL_FLAG(int32_t, fleet_queries, 50, "Fleet-wide queries per kind");
ABSL_FLAG(std::string, server_binary, "", "Server binary (default: runfiles)");
ABSL_FLAG(std::string, server_flags, "",
          "Extra server flags, space-separated (e.g. "
          "--query_scan_threads=1)");
ABSL_FLAG(std::string, store, "sqlite", "sqlite or postgres");

namespace tracehealth {
namespace {

// Prints the server's start log line about loading its index (the last
// start's: the log is appended to).
void PrintLoadLog(const std::string& log_path) {
  absl::StatusOr<std::string> log = testing::ReadFile(log_path);
  if (!log.ok()) return;
  std::string last;
  for (absl::string_view line : absl::StrSplit(*log, '\n')) {
    if (absl::StrContains(line, "hosts loaded")) last = std::string(line);
  }
  if (!last.empty()) std::printf("  server: %s\n", last.c_str());
}

void Report(const char* what, std::vector<double>& us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    return us[std::min(us.size() - 1, static_cast<size_t>(q * us.size()))];
  };
  std::printf("%-40s n=%zu p50=%.0fus p90=%.0fus p99=%.0fus max=%.0fus\n", what,
              us.size(), at(0.5), at(0.9), at(0.99), us.back());
}

std::vector<std::string> ServerFlags() {
  std::vector<std::string> flags = {"--host_report_rate=0"};
  for (absl::string_view f : absl::StrSplit(absl::GetFlag(FLAGS_server_flags),
                                            ' ', absl::SkipEmpty())) {
    flags.emplace_back(f);
  }
  return flags;
}

// One scrape of /metrics: its time, size, samples and the server's RSS
// before, at most during, and after it.
void Scrape(const testing::ServerProcess& sp) {
  const int pid = sp.process->pid();
  const int64_t before = testing::StatusKb(pid, "VmRSS");
  std::atomic<bool> done{false};
  std::atomic<int64_t> peak{before};
  std::thread sampler([&] {
    while (!done.load()) {
      int64_t kb = testing::StatusKb(pid, "VmRSS");
      if (kb > peak.load()) peak.store(kb);
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  const absl::Time t0 = absl::Now();
  absl::StatusOr<std::string> body =
      testing::HttpGet(sp.metrics_addr, "/metrics");
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
  done.store(true);
  sampler.join();
  if (!body.ok()) {
    std::printf("scrape failed: %s\n", body.status().ToString().c_str());
    return;
  }
  size_t samples = 0;
  for (absl::string_view line : absl::StrSplit(*body, '\n')) {
    if (!line.empty() && line[0] != '#') ++samples;
  }
  std::printf(
      "scrape /metrics: %.0f ms, %zu bytes (%.2f MB), %zu samples; server "
      "RSS %.1f MB before, %.1f MB at most during, %.1f MB after\n",
      ms, body->size(), body->size() / 1e6, samples, before / 1024.0,
      peak.load() / 1024.0, testing::StatusKb(pid, "VmRSS") / 1024.0);
}

// Fills the server with `hosts` hosts in chunks of 2000 (one stream per
// host, one report each); *half_kb is the server's RSS at half of them.
bool Fill(const testing::ServerProcess& sp, int hosts, int64_t* half_kb) {
  for (int first = 0; first < hosts; first += 2000) {
    if (first >= hosts / 2 && *half_kb == 0) {
      *half_kb = testing::StatusKb(sp.process->pid(), "VmRSS");
    }
    server::LoadOptions o;
    o.server = sp.grpc_addr;
    o.hosts = std::min(2000, hosts - first);
    o.first_host = first;
    o.reports_per_host = 1;
    o.duration = absl::Seconds(120);
    o.window = 1;
    auto r = server::RunLoad(o);
    if (!r.ok() || r->acked != static_cast<uint64_t>(o.hosts)) {
      std::fprintf(
          stderr, "fill failed at %d: %s\n", first,
          r.ok() ? r->first_error.c_str() : r.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

// PredictAttach on one host, ten, a selector and the whole fleet, with and
// without a what-if and a plan; prints each kind's latency percentiles.
void RunQueries(v1::FleetQuery::Stub& stub, int hosts, int server_pid) {
  std::mt19937 rng(42);
  auto run = [&](const char* what, int n, auto make_request) {
    std::vector<double> us;
    v1::PredictAttachResponse last;
    const double cpu0 = testing::ProcessCpuSeconds(server_pid);
    for (int i = 0; i < n; ++i) {
      v1::PredictAttachRequest req = make_request();
      v1::PredictAttachResponse resp;
      grpc::ClientContext ctx;
      absl::Time t0 = absl::Now();
      grpc::Status st = stub.PredictAttach(&ctx, req, &resp);
      us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
      if (!st.ok() || resp.answers_size() == 0) {
        std::fprintf(stderr, "%s: query failed: %s\n", what,
                     st.error_message().c_str());
        return last;
      }
      last = std::move(resp);
    }
    Report(what, us);
    // The server's CPU per query does not depend on what else runs on the
    // machine, where the latency does.
    std::printf("  server CPU %.2f ms per query\n",
                (testing::ProcessCpuSeconds(server_pid) - cpu0) * 1e3 / n);
    return last;
  };
  const int n = absl::GetFlag(FLAGS_queries);
  auto one_host = [&] {
    v1::PredictAttachRequest req;
    req.mutable_hosts()->add_host_ids(server::FleetHost(rng() % hosts).host_id);
    req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
    return req;
  };
  run("PredictAttach 1 host (stored)", n, one_host);
  run("PredictAttach 1 host what-if", n, [&] {
    v1::PredictAttachRequest req = one_host();
    req.mutable_what_if()->set_threads(400000);
    req.mutable_what_if()->set_batch(1024);
    return req;
  });
  run("PredictAttach 10 hosts what-if", n, [&] {
    v1::PredictAttachRequest req;
    for (int i = 0; i < 10; ++i) {
      req.mutable_hosts()->add_host_ids(
          server::FleetHost(rng() % hosts).host_id);
    }
    req.mutable_what_if()->set_threads(400000);
    return req;
  });
  const int fleet_n = absl::GetFlag(FLAGS_fleet_queries);
  v1::PredictAttachResponse sel =
      run("PredictAttach selector (stored)", fleet_n, [] {
        v1::PredictAttachRequest req;
        req.mutable_hosts()->set_labels("role=db,rack=~r1.*");
        req.set_limit(10);
        return req;
      });
  std::printf("  selector matched %u hosts\n", sel.matched_hosts());
  run("PredictAttach selector what-if", fleet_n, [] {
    v1::PredictAttachRequest req;
    req.mutable_hosts()->set_labels("role=db,rack=~r1.*");
    req.mutable_what_if()->set_threads(400000);
    req.set_limit(10);
    return req;
  });
  auto fleet_what_if = [] {
    v1::PredictAttachRequest req;
    req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
    req.mutable_what_if()->set_threads(400000);
    req.set_limit(10);
    return req;
  };
  v1::PredictAttachResponse fleet =
      run("PredictAttach whole fleet what-if", fleet_n, fleet_what_if);
  std::printf("  matched %u hosts\n", fleet.matched_hosts());
  v1::PredictAttachResponse plan =
      run("PredictAttach whole fleet plan+what-if", fleet_n, [&] {
        v1::PredictAttachRequest req = fleet_what_if();
        req.mutable_plan()->mutable_max_latency()->set_seconds(2);
        return req;
      });
  std::printf(
      "  plan over %u hosts: %u safe, %u over budget, %u lockup risk, %u "
      "unknown\n",
      plan.matched_hosts(), plan.plan().safe(), plan.plan().over_budget(),
      plan.plan().lockup_risk(), plan.plan().unknown());
  run("PredictAttach whole fleet plan (stored)", fleet_n, [] {
    v1::PredictAttachRequest req;
    req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
    req.mutable_plan()->mutable_max_latency()->set_seconds(2);
    req.set_limit(10);
    return req;
  });
}

int Main() {
  const uint64_t hard = server::RaiseOpenFileLimit();
  const testing::ScopedTempDir data("query_bench");
  const std::string& dir = data.path();
  std::vector<std::string> flags = ServerFlags();
  std::unique_ptr<testing::PostgresCluster> cluster;
  const bool postgres = absl::GetFlag(FLAGS_store) == "postgres";
  if (postgres) {
    auto c = testing::PostgresCluster::Start();
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
      return 1;
    }
    cluster = *std::move(c);
    auto dsn = cluster->CreateDatabase();
    if (!dsn.ok()) return 1;
    flags.push_back("--store=postgres");
    flags.push_back("--postgres_dsn=" + *dsn);
  }
  auto sp =
      testing::StartServer(dir, flags, absl::GetFlag(FLAGS_server_binary));
  if (!sp.ok()) {
    std::fprintf(stderr, "%s\n", sp.status().ToString().c_str());
    return 1;
  }
  const int64_t empty_kb = testing::StatusKb(sp->process->pid(), "VmRSS");
  const int hosts = absl::GetFlag(FLAGS_hosts);
  absl::Time fill_start = absl::Now();
  int64_t half_kb = 0;
  if (!Fill(*sp, hosts, &half_kb)) return 1;
  std::printf("filled %d hosts in %.1fs (open-file hard limit %llu)\n", hosts,
              absl::ToDoubleSeconds(absl::Now() - fill_start),
              static_cast<unsigned long long>(hard));
  const int64_t filled_kb = testing::StatusKb(sp->process->pid(), "VmRSS");
  std::string query_addr = sp->grpc_addr;
  absl::StatusOr<testing::ServerProcess> second;
  const testing::ScopedTempDir data2("query_bench2");
  if (postgres) {
    // The database, on the same 2 cores, would vacuum and checkpoint the
    // fill while the queries run (autovacuum starts right after it): do it
    // now, so the figures are the replica's.
    const absl::Time v0 = absl::Now();
    const std::string db =
        flags.back().substr(flags.back().rfind("dbname=") + 7);
    if (!cluster->Sql(db, "VACUUM ANALYZE").ok() ||
        !cluster->Sql(db, "CHECKPOINT").ok()) {
      return 1;
    }
    std::printf("vacuum + checkpoint after the fill: %.1fs\n",
                absl::ToDoubleSeconds(absl::Now() - v0));
    // A second replica loads the hosts at start; the queries go to it.
    const absl::Time t0 = absl::Now();
    second = testing::StartServer(data2.path(), flags,
                                  absl::GetFlag(FLAGS_server_binary));
    if (!second.ok()) {
      std::fprintf(stderr, "%s\n", second.status().ToString().c_str());
      return 1;
    }
    std::printf("second replica serving in %.2fs\n",
                absl::ToDoubleSeconds(absl::Now() - t0));
    query_addr = second->grpc_addr;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  auto stub = v1::FleetQuery::NewStub(grpc::CreateCustomChannel(
      query_addr, grpc::InsecureChannelCredentials(), args));
  RunQueries(*stub, hosts,
             postgres ? second->process->pid() : sp->process->pid());
  const int pid = sp->process->pid();
  const int64_t queried_kb = testing::StatusKb(pid, "VmRSS");
  std::printf(
      "server RSS: %.1f MB empty, %.1f MB at half the hosts, %.1f MB filled, "
      "%.1f MB after the queries (peak %.1f MB): %.0f bytes per host over "
      "the empty server, %.0f bytes per host added in the second half\n",
      empty_kb / 1024.0, half_kb / 1024.0, filled_kb / 1024.0,
      queried_kb / 1024.0, testing::StatusKb(pid, "VmHWM") / 1024.0,
      (queried_kb - empty_kb) * 1024.0 / hosts,
      (filled_kb - half_kb) * 1024.0 / (hosts - hosts / 2));
  for (int i = 0; i < 3; ++i) Scrape(postgres ? *second : *sp);
  if (postgres) {
    (void)second->process->Signal(SIGTERM);
    (void)second->process->Wait(absl::Seconds(60));
  }

  // Restarts over the same store: after kill -9 (the host ledger is rebuilt
  // from its last checkpoint plus the rows after it) and after a clean stop.
  for (int sig : {SIGKILL, SIGTERM}) {
    (void)sp->process->Signal(sig);
    (void)sp->process->Wait(absl::Seconds(60));
    const absl::Time t0 = absl::Now();
    sp = testing::StartServer(dir, flags, absl::GetFlag(FLAGS_server_binary));
    if (!sp.ok()) {
      std::fprintf(stderr, "restart: %s\n", sp.status().ToString().c_str());
      return 1;
    }
    const double ready = absl::ToDoubleSeconds(absl::Now() - t0);
    auto query = v1::FleetQuery::NewStub(
        grpc::CreateChannel(sp->grpc_addr, grpc::InsecureChannelCredentials()));
    v1::FleetSummaryResponse summary;
    grpc::ClientContext ctx;
    grpc::Status st =
        query->FleetSummary(&ctx, v1::FleetSummaryRequest(), &summary);
    std::printf(
        "restart after %s: serving in %.2fs, %u hosts (%s), RSS %.1f MB "
        "(%.0f bytes per host over the empty server)\n",
        sig == SIGKILL ? "kill -9" : "a clean stop", ready, summary.hosts(),
        st.ok() && summary.hosts() == static_cast<uint32_t>(hosts) ? "all"
                                                                   : "MISSING",
        testing::StatusKb(sp->process->pid(), "VmRSS") / 1024.0,
        (testing::StatusKb(sp->process->pid(), "VmRSS") - empty_kb) * 1024.0 /
            hosts);
    PrintLoadLog(sp->log_path);
    if (!st.ok() || summary.hosts() != static_cast<uint32_t>(hosts)) return 1;
  }
  (void)sp->process->Signal(SIGTERM);
  (void)sp->process->Wait(absl::Seconds(60));
  return 0;
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tracehealth::Main();
}
