// PostgreSQL ingest benchmark (prints figures; not a timed test).
//
// Starts a PostgreSQL 15 cluster of its own (fsync and synchronous_commit
// on: a commit is durable), then in one run:
// 1. the raw ceiling: the same rows (same report blobs) sent straight to
//    the reports table with binary COPY in transactions of --raw_batch rows,
//    as fast as one connection can, before and after the servers ran;
// 2. one tracehealth-server replica on it, streamed to by --hosts simulated
//    hosts (the load generator's engine, in this process): durable (acked)
//    reports/s and ack latency;
// 3. two replicas on a fresh database, each streamed to by half the hosts;
// 4. each as a ratio to the mean raw ceiling.
//
//   bazel run -c opt //tests/server:postgres_ingest_benchmark -- --hosts=200
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "server/ingest/report_row.h"
#include "server/report/report_head.h"
#include "server/storage/postgres/copy_binary.h"
#include "server/storage/postgres/pg_connection.h"
#include "server/storage/postgres/postgres_storage.h"
#include "tests/server/server_process.h"
#include "tests/util/postgres_cluster.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"
#include "tools/loadgen/sample_report.h"

ABSL_FLAG(int32_t, hosts, 200,
          "Simulated hosts (streams), split over the replicas");
ABSL_FLAG(double, seconds, 15, "Streaming time per run");
ABSL_FLAG(int32_t, window, 64, "Unacked reports per stream");
ABSL_FLAG(int32_t, channels, 8, "gRPC connections per replica's streams");
ABSL_FLAG(int32_t, raw_batch, 4096,
          "Rows per COPY transaction for the raw ceiling");
ABSL_FLAG(int64_t, raw_rows, 300000, "Rows for each raw ceiling measurement");

namespace tracehealth {
namespace {

// Settings of the benchmark's cluster: durable commits, and checkpoints
// that do not land inside a 15 s run.
const std::vector<std::string> kSettings = {
    "fsync=on",         "synchronous_commit=on",    "shared_buffers=512MB",
    "max_wal_size=8GB", "checkpoint_timeout=30min", "wal_buffers=64MB"};

absl::StatusOr<double> RawCeiling(testing::PostgresCluster& cluster, int hosts,
                                  uint64_t total) {
  auto dsn = cluster.CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  server::PostgresOptions po;
  po.dsn = *dsn;
  auto schema = server::PostgresStorage::Open(po);  // creates the tables
  if (!schema.ok()) return schema.status();
  auto conn = server::PgConnection::Connect(*dsn);
  if (!conn.ok()) return conn.status();
  const absl::Time now = absl::Now();
  std::vector<std::string> blobs;
  std::vector<server::ReportHead> heads;
  for (int i = 0; i < hosts; ++i) {
    blobs.push_back(
        server::SampleReport(server::FleetHost(i), 1, now).SerializeAsString());
  }
  for (const std::string& b : blobs) {
    auto h = server::DecodeReportHead(b);
    if (!h.ok()) return h.status();
    heads.push_back(*h);
  }
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_raw_batch));
  uint64_t written = 0;
  const absl::Time start = absl::Now();
  while (written < total) {
    server::CopyBinary copy;
    for (size_t i = 0; i < batch && written < total; ++i, ++written) {
      const size_t h = written % blobs.size();
      server::ReportRow r =
          server::MakeReportRow(heads[h], blobs[h], absl::Now());
      server::AddReportRow(copy, r,
                           static_cast<int64_t>(1 + written / blobs.size()));
    }
    absl::Status st = (*conn)->Run("BEGIN");
    if (st.ok()) {
      st = (*conn)->CopyIn(server::kCopyReports, copy.Finish());
    }
    if (st.ok()) st = (*conn)->Run("COMMIT");
    if (!st.ok()) return st;
  }
  return static_cast<double>(total) /
         absl::ToDoubleSeconds(absl::Now() - start);
}

struct RunFigures {
  double acked_per_second = 0;
  std::vector<server::LoadResult> per_replica;
};

absl::StatusOr<RunFigures> RunReplicas(testing::PostgresCluster& cluster,
                                       int replicas) {
  auto dsn = cluster.CreateDatabase();
  if (!dsn.ok()) return dsn.status();
  std::vector<std::unique_ptr<testing::ScopedTempDir>> dirs;
  std::vector<testing::ServerProcess> servers;
  for (int i = 0; i < replicas; ++i) {
    dirs.push_back(std::make_unique<testing::ScopedTempDir>("pg_ingest_bench"));
    auto sp = testing::StartServer(
        dirs.back()->path(),
        {"--host_report_rate=0", "--store=postgres", "--postgres_dsn=" + *dsn});
    if (!sp.ok()) return sp.status();
    servers.push_back(*std::move(sp));
  }
  const int hosts = absl::GetFlag(FLAGS_hosts);
  std::vector<absl::StatusOr<server::LoadResult>> results(replicas);
  std::vector<std::thread> threads;
  for (int i = 0; i < replicas; ++i) {
    threads.emplace_back([&, i] {
      server::LoadOptions o;
      o.server = servers[i].grpc_addr;
      o.hosts = hosts / replicas;
      o.first_host = i * (hosts / replicas);
      o.duration = absl::Seconds(absl::GetFlag(FLAGS_seconds));
      o.window = absl::GetFlag(FLAGS_window);
      o.channels = absl::GetFlag(FLAGS_channels);
      results[i] = server::RunLoad(o);
    });
  }
  for (std::thread& t : threads) t.join();
  RunFigures f;
  for (int i = 0; i < replicas; ++i) {
    std::printf("  replica %d %s\n", i,
                testing::VmRssLine(servers[i].process->pid()).c_str());
    (void)servers[i].process->Signal(SIGTERM);
    (void)servers[i].process->Wait(absl::Seconds(30));
    if (!results[i].ok()) return results[i].status();
    f.acked_per_second += results[i]->acked_per_second;
    f.per_replica.push_back(*results[i]);
  }
  return f;
}

int Main() {
  testing::PostgresCluster::Options co;
  co.settings = kSettings;
  auto cluster = testing::PostgresCluster::Start(co);
  if (!cluster.ok()) {
    std::fprintf(stderr, "%s\n", cluster.status().ToString().c_str());
    return 1;
  }
  const int hosts = absl::GetFlag(FLAGS_hosts);
  const uint64_t raw_rows =
      static_cast<uint64_t>(absl::GetFlag(FLAGS_raw_rows));
  auto raw_before = RawCeiling(**cluster, hosts, raw_rows);
  if (!raw_before.ok()) {
    std::fprintf(stderr, "raw: %s\n", raw_before.status().ToString().c_str());
    return 1;
  }
  std::vector<std::pair<int, RunFigures>> runs;
  for (int replicas : {1, 2}) {
    auto f = RunReplicas(**cluster, replicas);
    if (!f.ok()) {
      std::fprintf(stderr, "%d replicas: %s\n", replicas,
                   f.status().ToString().c_str());
      return 1;
    }
    runs.emplace_back(replicas, *std::move(f));
  }
  auto raw_after = RawCeiling(**cluster, hosts, raw_rows);
  if (!raw_after.ok()) return 1;
  const double raw = (*raw_before + *raw_after) / 2;
  std::printf(
      "raw postgres COPY: rows=%llu batch=%d rows_per_second before=%.0f "
      "after=%.0f "
      "mean=%.0f\n",
      static_cast<unsigned long long>(raw_rows), absl::GetFlag(FLAGS_raw_batch),
      *raw_before, *raw_after, raw);
  for (const auto& [replicas, f] : runs) {
    std::printf(
        "%d replica(s), %d hosts: durable_reports_per_second=%.0f "
        "ratio/raw=%.2f\n",
        replicas, hosts, f.acked_per_second, f.acked_per_second / raw);
    for (size_t i = 0; i < f.per_replica.size(); ++i) {
      const server::LoadResult& r = f.per_replica[i];
      std::printf(
          "  replica %zu: acked=%llu failed_streams=%llu %.0f/s ack_p50=%s "
          "ack_p99=%s "
          "ack_max=%s\n",
          i, static_cast<unsigned long long>(r.acked),
          static_cast<unsigned long long>(r.failed_streams), r.acked_per_second,
          absl::FormatDuration(r.ack_p50).c_str(),
          absl::FormatDuration(r.ack_p99).c_str(),
          absl::FormatDuration(r.ack_max).c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  return tracehealth::Main();
}
