// Ingest benchmark (prints figures; not a timed test).
//
// 1. Starts the real tracehealth-server on loopback with a fresh data dir and
//    streams from N simulated hosts (tracehealth-loadgen's engine, in this
//    process) for a bounded time: durable (acked) reports/s and ack latency.
// 2. In the same run, before and after, the raw SQLite ceiling: the same
//    rows (same report blobs) inserted directly with SqliteStorage in
//    batched transactions.
// 3. The ratio of the two.
//
//   bazel run -c opt //tests/server:ingest_benchmark -- --hosts=100
//   --seconds=15
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "server/ingest/report_row.h"
#include "server/report/report_head.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"
#include "tools/loadgen/sample_report.h"

ABSL_FLAG(int32_t, hosts, 100, "Simulated hosts (streams)");
ABSL_FLAG(double, seconds, 15, "Streaming time");
ABSL_FLAG(int32_t, window, 64, "Unacked reports per stream");
ABSL_FLAG(int32_t, channels, 8, "gRPC connections the streams share");
ABSL_FLAG(int32_t, raw_batch, 4096, "Rows per transaction for the raw ceiling");
ABSL_FLAG(int64_t, raw_rows, 500000, "Rows for each raw ceiling measurement");
ABSL_FLAG(bool, heartbeat_forms, false,
          "Each host's first report whole, the rest in heartbeat form (an "
          "agent whose host does not change, to a server that offers forms)");
ABSL_FLAG(int32_t, batch, 1,
          "Reports per message: above 1, ReportBatches streams (an agent "
          "replaying a backlog)");
ABSL_FLAG(std::string, server_binary, "", "Server binary (default: runfiles)");
ABSL_FLAG(std::vector<std::string>, server_flags, {},
          "Extra server flags, comma-separated (e.g. --commit_interval=2ms)");

namespace tracehealth {
namespace {

// The rows a raw ceiling writes: as the ingest path builds them today (the
// report, its stored host record, its material content: a steady host's
// later reports are stored as heartbeats), or in the shape rows had before
// stored records and heartbeats (the report alone, always stored whole),
// which the earlier ceilings were measured on.
enum class RowShape { kIngest, kReportOnly };

// Raw ceiling: `total` rows of the same reports (same blobs, seqs counting
// up per host) written straight into a new SqliteStorage in transactions of
// --raw_batch rows, as fast as one thread can. Rows per second. Each host's
// row is built once, before the clock starts (the ceiling is the store's;
// building a row is the ingest path's and counts in the server's figure):
// the timed loop copies it and sets its seq.
absl::StatusOr<double> RawCeiling(int hosts, uint64_t total, RowShape shape) {
  std::vector<v1::HostReport> reports;
  const absl::Time now = absl::Now();
  for (int i = 0; i < hosts; ++i) {
    reports.push_back(server::SampleReport(server::FleetHost(i), 1, now));
  }
  std::vector<std::string> blobs;
  for (auto& rep : reports) blobs.push_back(rep.SerializeAsString());
  std::vector<server::ReportHead> heads;  // views into blobs
  for (const std::string& b : blobs) {
    absl::StatusOr<server::ReportHead> h = server::DecodeReportHead(b);
    if (!h.ok()) return h.status();
    heads.push_back(*h);
  }
  std::vector<server::ReportRow> built;
  for (size_t h = 0; h < reports.size(); ++h) {
    built.push_back(server::MakeReportRow(heads[h], blobs[h], now));
    if (shape == RowShape::kReportOnly) {
      built.back().record.clear();
      built.back().material_digest = 0;  // unknown: never a heartbeat
      built.back().material_numbers = nullptr;
    }
  }
  const testing::ScopedTempDir raw_dir("raw_bench");
  auto storage = server::SqliteStorage::Open(raw_dir.path() + "/raw.db");
  if (!storage.ok()) return storage.status();
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_raw_batch));
  std::vector<server::ReportRow> rows;
  rows.reserve(batch);
  uint64_t written = 0;
  const absl::Time start = absl::Now();
  while (written < total) {
    rows.clear();
    for (size_t i = 0; i < batch && written < total; ++i, ++written) {
      size_t h = written % reports.size();
      rows.push_back(built[h]);
      rows.back().seq = 1 + written / reports.size();
    }
    auto out = (*storage)->WriteBatch(rows);
    if (!out.ok()) return out.status();
  }
  return static_cast<double>(total) /
         absl::ToDoubleSeconds(absl::Now() - start);
}

int Main() {
  const uint64_t raw_rows =
      static_cast<uint64_t>(absl::GetFlag(FLAGS_raw_rows));
  auto raw_before =
      RawCeiling(absl::GetFlag(FLAGS_hosts), raw_rows, RowShape::kIngest);
  auto bare_before =
      RawCeiling(absl::GetFlag(FLAGS_hosts), raw_rows, RowShape::kReportOnly);
  for (const auto* c : {&raw_before, &bare_before}) {
    if (!c->ok()) {
      std::fprintf(stderr, "raw: %s\n", c->status().ToString().c_str());
      return 1;
    }
  }
  const testing::ScopedTempDir data("ingest_bench");
  const std::string& dir = data.path();
  std::vector<std::string> server_flags = {"--host_report_rate=0"};
  for (const std::string& f : absl::GetFlag(FLAGS_server_flags))
    server_flags.push_back(f);
  auto sp = testing::StartServer(dir, server_flags,
                                 absl::GetFlag(FLAGS_server_binary));
  if (!sp.ok()) {
    std::fprintf(stderr, "%s\n", sp.status().ToString().c_str());
    return 1;
  }
  server::LoadOptions o;
  o.server = sp->grpc_addr;
  o.hosts = absl::GetFlag(FLAGS_hosts);
  o.duration = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  o.window = absl::GetFlag(FLAGS_window);
  o.channels = absl::GetFlag(FLAGS_channels);
  o.heartbeat_forms = absl::GetFlag(FLAGS_heartbeat_forms);
  o.batch = absl::GetFlag(FLAGS_batch);
  const auto threads0 = testing::ThreadCpuSeconds(sp->process->pid());
  const double server_cpu0 = testing::ProcessCpuSeconds(sp->process->pid());
  const double self_cpu0 = testing::ProcessCpuSeconds(getpid());
  auto r = server::RunLoad(o);
  const double server_cpu =
      testing::ProcessCpuSeconds(sp->process->pid()) - server_cpu0;
  auto threads = testing::ThreadCpuSeconds(sp->process->pid());
  for (const auto& [name, cpu] : threads0) threads[name] -= cpu;
  const double self_cpu = testing::ProcessCpuSeconds(getpid()) - self_cpu0;
  std::printf("server %s\n", testing::VmRssLine(sp->process->pid()).c_str());
  // The writer's side, from the server's own metrics: batch size and the
  // share of the run spent in storage commits.
  if (auto m = testing::HttpGet(sp->metrics_addr, "/metrics"); m.ok()) {
    auto value = [&](absl::string_view name) {
      for (absl::string_view line : absl::StrSplit(*m, '\n')) {
        if (absl::StartsWith(line, absl::StrCat(name, " "))) {
          double v = 0;
          if (absl::SimpleAtod(line.substr(name.size() + 1), &v)) return v;
        }
      }
      return 0.0;
    };
    const double batches = value("tracehealth_ingest_batch_reports_count");
    if (batches > 0 && r.ok()) {
      std::printf(
          "writer: %.0f commits, %.0f reports per commit, storage busy %.0f%% "
          "of the run\n",
          batches, value("tracehealth_ingest_batch_reports_sum") / batches,
          100 * value("tracehealth_ingest_commit_seconds_sum") /
              absl::ToDoubleSeconds(r->elapsed));
    }
  }
  (void)sp->process->Signal(SIGTERM);
  auto rc = sp->process->Wait(absl::Seconds(30));
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "server: hosts=%d window=%d report_bytes=%lld form_bytes=%lld "
      "sent=%llu acked=%llu failed_streams=%llu elapsed=%.2fs exit=%d\n",
      o.hosts, o.window, static_cast<long long>(r->report_bytes),
      static_cast<long long>(r->form_bytes),
      static_cast<unsigned long long>(r->sent),
      static_cast<unsigned long long>(r->acked),
      static_cast<unsigned long long>(r->failed_streams),
      absl::ToDoubleSeconds(r->elapsed), rc.ok() ? *rc : -1);
  std::printf(
      "server: durable_reports_per_second=%.0f ack_p50=%s ack_p99=%s "
      "ack_max=%s\n",
      r->acked_per_second, absl::FormatDuration(r->ack_p50).c_str(),
      absl::FormatDuration(r->ack_p99).c_str(),
      absl::FormatDuration(r->ack_max).c_str());
  // CPU per report: a figure that holds even when other work shares the
  // machine (throughput does not).
  if (r->acked > 0) {
    std::printf(
        "cpu: server=%.2fs (%.1f us/report, %.2f cores) load_generator=%.2fs "
        "(%.1f us/report)\n",
        server_cpu, 1e6 * server_cpu / static_cast<double>(r->acked),
        server_cpu / absl::ToDoubleSeconds(r->elapsed), self_cpu,
        1e6 * self_cpu / static_cast<double>(r->acked));
    // Where the server's time goes, by thread name (gRPC's callback threads
    // run the streams: read, parse, validate, ack).
    std::string by_thread;
    for (const auto& [name, cpu] : threads) {
      if (cpu * 1e6 / static_cast<double>(r->acked) < 0.05) continue;
      absl::StrAppend(
          &by_thread, " ", name, "=",
          absl::SixDigits(1e6 * cpu / static_cast<double>(r->acked)));
    }
    std::printf("cpu by server thread (us/report):%s\n", by_thread.c_str());
  }

  // The raw ceiling was measured before the server ran and is measured
  // again now; the ratio uses their mean, so a machine that speeds up or
  // slows down during the run does not tilt it.
  auto raw_after = RawCeiling(o.hosts, raw_rows, RowShape::kIngest);
  auto bare_after = RawCeiling(o.hosts, raw_rows, RowShape::kReportOnly);
  for (const auto* c : {&raw_after, &bare_after}) {
    if (!c->ok()) {
      std::fprintf(stderr, "raw: %s\n", c->status().ToString().c_str());
      return 1;
    }
  }
  const double raw = (*raw_before + *raw_after) / 2;
  const double bare = (*bare_before + *bare_after) / 2;
  std::printf(
      "raw sqlite, rows as ingest builds them: rows=%llu batch=%d "
      "rows_per_second before=%.0f after=%.0f mean=%.0f\n",
      static_cast<unsigned long long>(raw_rows), absl::GetFlag(FLAGS_raw_batch),
      *raw_before, *raw_after, raw);
  std::printf(
      "raw sqlite, report rows alone (the shape before stored records): "
      "rows_per_second before=%.0f after=%.0f mean=%.0f\n",
      *bare_before, *bare_after, bare);
  std::printf("ratio server/raw = %.2f (against report rows alone: %.2f)\n",
              r->acked_per_second / raw, r->acked_per_second / bare);
  return 0;
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  // As in the server: no lock-order graph on every absl::Mutex operation
  // (the system's absl is built without NDEBUG).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  return tracehealth::Main();
}
