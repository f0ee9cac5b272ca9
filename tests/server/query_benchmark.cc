// Query benchmark (prints figures; not a timed test): fills the real server
// with N hosts (one report each, through the ingest API), then measures
// PredictAttach latency over gRPC on loopback: single host by id (stored
// prediction), single host with a what-if (models re-run), and a label
// selector over the fleet.
//
//   bazel run //tests/server:query_benchmark -- --hosts=100000
//
// With --store=postgres the store is a PostgreSQL 15 cluster the benchmark
// starts (tests/util/postgres_cluster.h); a second replica on it answers
// the queries, its index filled from the first replica's commits through
// the change feed.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/server/server_process.h"
#include "tests/util/postgres_cluster.h"
#include "tests/util/sample_report.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"

ABSL_FLAG(int32_t, hosts, 100000, "Hosts to store");
ABSL_FLAG(int32_t, queries, 5000, "Queries per kind");
ABSL_FLAG(std::string, server_binary, "", "Server binary (default: runfiles)");
ABSL_FLAG(std::string, store, "sqlite", "sqlite or postgres");

namespace tracehealth {
namespace {

void Report(const char* what, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    return us[std::min(us.size() - 1, static_cast<size_t>(q * us.size()))];
  };
  std::printf("%-34s n=%zu p50=%.0fus p90=%.0fus p99=%.0fus max=%.0fus\n", what,
              us.size(), at(0.5), at(0.9), at(0.99), us.back());
}

int Main() {
  const testing::ScopedTempDir data("query_bench");
  const std::string& dir = data.path();
  std::vector<std::string> flags = {"--host_report_rate=0"};
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
  const int hosts = absl::GetFlag(FLAGS_hosts);
  absl::Time fill_start = absl::Now();
  // Fill in chunks of 2000 hosts (one stream per host, one report each).
  for (int first = 0; first < hosts; first += 2000) {
    server::LoadOptions o;
    o.server = sp->grpc_addr;
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
      return 1;
    }
  }
  std::printf("filled %d hosts in %.1fs\n", hosts,
              absl::ToDoubleSeconds(absl::Now() - fill_start));
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
  auto stub = v1::FleetQuery::NewStub(
      grpc::CreateChannel(query_addr, grpc::InsecureChannelCredentials()));
  std::mt19937 rng(42);
  const int n = absl::GetFlag(FLAGS_queries);
  auto run = [&](const char* what, auto make_request) {
    std::vector<double> us;
    for (int i = 0; i < n; ++i) {
      v1::PredictAttachRequest req = make_request();
      v1::PredictAttachResponse resp;
      grpc::ClientContext ctx;
      absl::Time t0 = absl::Now();
      grpc::Status st = stub->PredictAttach(&ctx, req, &resp);
      us.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
      if (!st.ok() || resp.answers_size() == 0) {
        std::fprintf(stderr, "%s: query failed: %s\n", what,
                     st.error_message().c_str());
        return;
      }
    }
    Report(what, us);
  };
  auto one_host = [&] {
    v1::PredictAttachRequest req;
    req.mutable_hosts()->add_host_ids(server::FleetHost(rng() % hosts).host_id);
    req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
    return req;
  };
  run("PredictAttach 1 host (stored)", one_host);
  run("PredictAttach 1 host what-if", [&] {
    v1::PredictAttachRequest req = one_host();
    req.mutable_what_if()->set_threads(400000);
    req.mutable_what_if()->set_batch(1024);
    return req;
  });
  run("PredictAttach 10 hosts what-if", [&] {
    v1::PredictAttachRequest req;
    for (int i = 0; i < 10; ++i) {
      req.mutable_hosts()->add_host_ids(
          server::FleetHost(rng() % hosts).host_id);
    }
    req.mutable_what_if()->set_threads(400000);
    return req;
  });
  std::vector<double> sel;
  for (int i = 0; i < 20; ++i) {
    v1::PredictAttachRequest req;
    req.mutable_hosts()->set_labels("role=db,rack=~r1.*");
    req.set_limit(10);
    v1::PredictAttachResponse resp;
    grpc::ClientContext ctx;
    absl::Time t0 = absl::Now();
    grpc::Status st = stub->PredictAttach(&ctx, req, &resp);
    sel.push_back(absl::ToDoubleMicroseconds(absl::Now() - t0));
    if (i == 0)
      std::printf("selector matched %u hosts\n", resp.matched_hosts());
  }
  Report("PredictAttach selector (fleet scan)", sel);
  std::printf("server %s\n", testing::VmRssLine(sp->process->pid()).c_str());
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
        "restart after %s: serving in %.2fs, %u hosts (%s)\n",
        sig == SIGKILL ? "kill -9" : "a clean stop", ready, summary.hosts(),
        st.ok() && summary.hosts() == static_cast<uint32_t>(hosts) ? "all"
                                                                   : "MISSING");
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
