// History disk benchmark (prints figures; not a timed test): bytes per host
// per day on disk with every report stored whole (--full_report_interval=0,
// as before heartbeats) and with heartbeats, and the ratio to a Prometheus
// estimate for the same signal.
//
// Simulated hosts report every 15 s (simulated time: the store sees the
// receive times of a day, the run takes minutes). Rows are written straight
// into SqliteStorage::WriteBatch in batches, as the ingest writer does, from
// rows built by the ingest path (MakeReportRow: parse, record, material
// content) once per host and report variant; each report's seq and times
// are its own and its blob is serialized per report. Three kinds of host:
//   steady    threads constant;
//   drifting  threads move every cycle (a random walk over 16 values,
//             within 0.5 % of the host's count);
//   changing  drifting, plus a kernel change every 6 h and an hour a day at
//             8x the threads (another risk).
//
// 1. The day: --day_hosts hosts of each kind through --cycles cycles (5,760
//    = a day), in a store of their own per kind and mode; the file sizes
//    after the store is closed (ledger checkpointed, log checkpointed and
//    truncated), divided by the hosts.
//    A RollUp pass after every simulated hour (as the housekeeper, during
//    ingest) and one at the end: rollup rows, their bytes (table and index;
//    included in the file sizes) and the passes' time.
// 2. The fleet: --fleet_hosts hosts (half steady, 45 % drifting, 5 %
//    changing) through --fleet_cycles cycles with heartbeats (5,760: the
//    whole day) and --fleet_whole_cycles cycles stored whole: bytes per host
//    per day of each (a span shorter than the day scaled to it), the ratio,
//    and the store's rows/s of each at that scale.
// 3. The wire (--wire, in the day pass): bytes per host per day the agents
//    send, every report whole and with heartbeat forms (the agent's
//    HeartbeatFormer).
// Store rows/s is the WriteBatch time only (row preparation excluded), and
// its CPU the writing thread's (the background WAL checkpoints not counted).
//
// --store=postgres drives PostgresStorage instead, each store a database of
// a PostgreSQL cluster the benchmark starts (tests/util/postgres_cluster.h,
// default settings): the bytes are the sum of pg_total_relation_size
// (table, indexes, TOAST) over every table after VACUUM and CHECKPOINT;
// us CPU is then the client's only.
//
//   bazel run -c opt //tests/server:history_disk_benchmark
//   bazel run -c opt //tests/server:history_disk_benchmark -- \
//     --day_hosts=20 --fleet_hosts=10000 --fleet_cycles=5760
//   bazel run -c opt //tests/server:history_disk_benchmark -- \
//     --store=postgres --day_hosts=10 --fleet_hosts=0

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/uplink/heartbeat_former.h"
#include "common/report/material.h"
#include "google/protobuf/util/time_util.h"
#include "server/ingest/report_row.h"
#include "server/report/report_head.h"
#include "server/storage/rollup.h"
#include "tests/server/history_disk_stores.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

ABSL_FLAG(int32_t, day_hosts, 50, "Hosts of each kind driven through the day");
ABSL_FLAG(int32_t, cycles, 5760, "Report cycles of the day (15 s each)");
ABSL_FLAG(int32_t, fleet_hosts, 10000, "Hosts of the fleet pass");
ABSL_FLAG(int32_t, fleet_cycles, 240,
          "Cycles of the fleet pass with heartbeats (5,760: a day)");
ABSL_FLAG(int32_t, fleet_whole_cycles, 240,
          "Cycles of the fleet pass storing every report whole (the before "
          "figure: its bytes grow linearly, a day of 10,000 hosts is 170 GB)");
ABSL_FLAG(int32_t, batch, 1024, "Rows per WriteBatch");
ABSL_FLAG(absl::Duration, full_report_interval, absl::Hours(6),
          "Heartbeat mode's full report interval");
ABSL_FLAG(std::string, store, "sqlite", "sqlite or postgres");
ABSL_FLAG(bool, wire, true,
          "Count the bytes agents send, whole and with heartbeat forms (in "
          "the day pass; about 5 us of CPU a report, outside the store's "
          "figures)");

namespace tracehealth {
namespace {

using history_disk::DrivenStore;
using history_disk::OpenPostgres;
using history_disk::OpenSqlite;
using history_disk::StoreFigures;
using history_disk::ThreadCpuSeconds;

using server::ReportRow;

constexpr int kSets = 3;       // kernel A, kernel B, 8x threads
constexpr int kVariants = 16;  // thread counts of a set
const absl::Time kDayStart = absl::FromUnixSeconds(1800000000);

enum Kind { kSteady = 0, kDrifting = 1, kChanging = 2 };
const char* const kKindNames[] = {"steady", "drifting", "changing"};

// One host's reports: per (set, variant) the report and its ingest row.
struct HostModel {
  std::string host_id;
  Kind kind = kSteady;
  std::vector<v1::HostReport> reports;  // [set * kVariants + variant]
  std::vector<ReportRow> rows;
  int variant = 0;
  uint64_t seq = 0;
};

HostModel Model(int template_index, const std::string& host_id, Kind kind) {
  HostModel m;
  m.host_id = host_id;
  m.kind = kind;
  server::SampleHost base = server::FleetHost(template_index);
  base.host_id = host_id;
  base.role = "web";
  const int sets = kind == kChanging ? kSets : 1;
  for (int set = 0; set < sets; ++set) {
    for (int v = 0; v < kVariants; ++v) {
      server::SampleHost h = base;
      if (set == 1) h.kernel_release = base.kernel_release + ".1";
      const uint64_t threads = set == 2 ? base.threads * 8 : base.threads;
      h.threads = threads + threads * v / 3200;  // up to +0.47 %
      v1::HostReport r = server::SampleReport(h, 1, kDayStart);
      const std::string blob = r.SerializeAsString();
      m.rows.push_back(server::MakeReportRow(*server::DecodeReportHead(blob),
                                             blob, kDayStart));
      m.reports.push_back(std::move(r));
    }
  }
  return m;
}

// The row of `m`'s next report, cycle `cycle`.
ReportRow NextRow(HostModel& m, int cycle, std::mt19937& rng) {
  int set = 0;
  if (m.kind != kSteady) {
    // A different thread count every cycle.
    m.variant = (m.variant + 1 + static_cast<int>(rng() % 3)) % kVariants;
  }
  if (m.kind == kChanging) {
    const int hour = (cycle / 240) % 24;
    set = hour == 13 ? 2 : (cycle / 1440) % 2;  // 8x threads 13:00-14:00
  }
  const int i = set * kVariants + m.variant;
  v1::HostReport& r = m.reports[i];
  r.set_seq(++m.seq);
  const absl::Time observed = kDayStart + absl::Seconds(15) * cycle +
                              absl::Microseconds(rng() % 200000);
  *r.mutable_observed_at() =
      google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
          absl::ToUnixNanos(observed));
  ReportRow row = m.rows[i];
  row.seq = m.seq;
  row.observed_at_ns = absl::ToUnixNanos(observed);
  row.received_at_ns = row.observed_at_ns +
                       absl::ToInt64Nanoseconds(absl::Milliseconds(2)) +
                       static_cast<int64_t>(rng() % 3000000);
  row.blob = r.SerializeAsString();
  return row;
}

// Drives `hosts` through `cycles` cycles into a new store.
// With `count_wire`, also what the agents would send (StoreFigures).
StoreFigures Drive(std::vector<HostModel>& hosts, int cycles,
                   absl::Duration interval, bool count_wire) {
  DrivenStore d = absl::GetFlag(FLAGS_store) == "postgres"
                      ? OpenPostgres(interval)
                      : OpenSqlite(interval);
  std::unique_ptr<server::ReportStore>* store = &d.store;
  std::mt19937 rng(7);
  StoreFigures f;
  const size_t batch = static_cast<size_t>(absl::GetFlag(FLAGS_batch));
  std::vector<ReportRow> rows;
  rows.reserve(batch);
  std::vector<agent::HeartbeatFormer> formers(
      hosts.size(), agent::HeartbeatFormer(absl::Hours(6)));
  const bool wire = count_wire;
  v1::HostReport sent;
  int64_t last_observed_ns = 0;
  auto flush = [&] {
    for (const ReportRow& r : rows) {
      last_observed_ns = std::max(last_observed_ns, r.observed_at_ns);
    }
    const absl::Time t0 = absl::Now();
    const double c0 = ThreadCpuSeconds();
    auto out = (*store)->WriteBatch(rows);
    f.store_cpu_seconds += ThreadCpuSeconds() - c0;
    f.store_seconds += absl::ToDoubleSeconds(absl::Now() - t0);
    if (!out.ok()) {
      std::fprintf(stderr, "write: %s\n", out.status().ToString().c_str());
      std::exit(1);
    }
    f.reports += static_cast<int64_t>(rows.size());
    rows.clear();
  };
  // The hours that ended by `before_ns`, as the housekeeper rolls them up.
  auto roll = [&](int64_t before_ns) {
    const absl::Time t0 = absl::Now();
    const double c0 = ThreadCpuSeconds();
    auto pass = (*store)->RollUp(before_ns, 1 << 20);
    f.rollup_cpu_seconds += ThreadCpuSeconds() - c0;
    f.rollup_seconds += absl::ToDoubleSeconds(absl::Now() - t0);
    if (!pass.ok()) {
      std::fprintf(stderr, "rollup: %s\n", pass.status().ToString().c_str());
      std::exit(1);
    }
    f.rollup_rows += pass->rows;
  };
  for (int c = 0; c < cycles; ++c) {
    if (c > 0 && c % 240 == 0) {  // a simulated hour: a pass, during ingest
      if (!rows.empty()) flush();
      roll(last_observed_ns);
    }
    for (size_t h = 0; h < hosts.size(); ++h) {
      rows.push_back(NextRow(hosts[h], c, rng));
      if (wire) {
        const std::string& blob = rows.back().blob;
        f.wire_whole_bytes += static_cast<int64_t>(blob.size()) + 5;
        if (!sent.ParseFromString(blob)) std::exit(3);
        if (formers[h].Form(blob, &sent)) ++f.forms;
        f.wire_form_bytes += static_cast<int64_t>(sent.ByteSizeLong()) + 5;
      }
      if (rows.size() == batch) flush();
    }
  }
  if (!rows.empty()) flush();
  roll(server::HourStart(last_observed_ns) + server::kRollupHourNs);
  // SQLite: ledger checkpoint, log checkpointed and truncated.
  store->reset();
  d.measure(f);
  return f;
}

void PrintRollups(const StoreFigures& f, int hosts, double day_fraction) {
  std::printf(
      "          rollups: %lld rows, %lld B (%.0f B/row, %.0f B/host/day), "
      "passes %.2f s, %.2f us CPU a report\n",
      static_cast<long long>(f.rollup_rows),
      static_cast<long long>(f.rollup_bytes),
      f.rollup_rows > 0 ? static_cast<double>(f.rollup_bytes) / f.rollup_rows
                        : 0.0,
      f.rollup_bytes / static_cast<double>(hosts) / day_fraction,
      f.rollup_seconds, f.rollup_cpu_seconds * 1e6 / f.reports);
}

int Main() {
  const std::string kind_of_store = absl::GetFlag(FLAGS_store);
  if (kind_of_store != "sqlite" && kind_of_store != "postgres") {
    std::fprintf(stderr, "--store: sqlite or postgres\n");
    return 2;
  }
  std::printf("store: %s\n", kind_of_store.c_str());
  const int day_hosts = absl::GetFlag(FLAGS_day_hosts);
  const int cycles = absl::GetFlag(FLAGS_cycles);
  const double day_fraction = cycles / 5760.0;
  const absl::Duration interval = absl::GetFlag(FLAGS_full_report_interval);
  // Prometheus: 30 series sampled every 15 s, 1.3-2 bytes a sample.
  const double prom_lo = 1.3 * 30 * 5760, prom_hi = 2.0 * 30 * 5760;
  std::printf(
      "Prometheus estimate: 1.3-2 B/sample x 30 series x 5,760 "
      "samples/day = %.0f-%.0f B/host/day\n",
      prom_lo, prom_hi);
  std::printf(
      "full_report_interval %s; %d cycles (%.2f day); %d hosts of "
      "each kind\n",
      absl::FormatDuration(interval).c_str(), cycles, day_fraction, day_hosts);
  {
    HostModel probe = Model(1, "host-000001", kSteady);
    const std::string blob = probe.reports[0].SerializeAsString();
    const Material m = MaterialOfWire(blob);
    constexpr int kN = 20000;
    uint64_t sink = 0;
    const double c0 = ThreadCpuSeconds();
    for (int i = 0; i < kN; ++i) sink += MaterialOfWire(blob).digest;
    std::printf(
        "report %zu B, record %zu B; material content: %zu numbers, "
        "%.2f us CPU a report (%llu)\n",
        blob.size(), probe.rows[0].record.size(), m.numbers.size(),
        (ThreadCpuSeconds() - c0) * 1e6 / kN,
        static_cast<unsigned long long>(sink % 10));
  }
  std::printf("\n%-9s %-10s %12s %10s %14s %10s %9s %9s %9s\n", "kind", "mode",
              "reports", "full rows", "B/host/day", "vs whole", "vs Prom",
              "rows/s", "us CPU");
  StoreFigures wire[3];
  // --day_hosts=0: the fleet pass only.
  for (Kind kind : {kSteady, kDrifting, kChanging}) {
    if (day_hosts <= 0) break;
    double whole_bytes = 0;
    for (bool beats : {false, true}) {
      std::vector<HostModel> hosts;
      for (int i = 0; i < day_hosts; ++i) {
        hosts.push_back(Model(i, absl::StrFormat("host-%06d", i), kind));
      }
      const StoreFigures f =
          Drive(hosts, cycles, beats ? interval : absl::ZeroDuration(),
                beats && absl::GetFlag(FLAGS_wire));
      if (beats) wire[kind] = f;
      const double per_day = f.file_bytes / day_hosts / day_fraction;
      if (!beats) whole_bytes = per_day;
      std::printf("%-9s %-10s %12lld %10lld %14.0f %9.1fx %8.2fx %9.0f %9.2f\n",
                  kKindNames[kind], beats ? "heartbeat" : "whole",
                  static_cast<long long>(f.reports),
                  static_cast<long long>(f.full_rows), per_day,
                  whole_bytes / per_day, per_day / prom_lo,
                  f.reports / f.store_seconds,
                  f.store_cpu_seconds * 1e6 / f.reports);
      std::printf("          tables: %s\n", f.tables.c_str());
      PrintRollups(f, day_hosts, day_fraction);
    }
  }
  if (absl::GetFlag(FLAGS_wire) && day_hosts > 0) {
    std::printf(
        "\nnetwork (agent to server: serialized reports + 5 B gRPC prefix; "
        "HTTP/2 and TLS framing not counted)\n%-9s %16s %16s %9s %9s\n",
        "kind", "whole B/host/day", "forms B/host/day", "ratio", "forms");
    for (Kind kind : {kSteady, kDrifting, kChanging}) {
      const StoreFigures& f = wire[kind];
      const double per = day_hosts * day_fraction;
      std::printf("%-9s %16.0f %16.0f %8.1fx %8.1f%%\n", kKindNames[kind],
                  f.wire_whole_bytes / per, f.wire_form_bytes / per,
                  static_cast<double>(f.wire_whole_bytes) / f.wire_form_bytes,
                  100.0 * f.forms / f.reports);
    }
  }
  const int fleet = absl::GetFlag(FLAGS_fleet_hosts);
  const int fleet_cycles = absl::GetFlag(FLAGS_fleet_cycles);
  if (fleet > 0 && fleet_cycles > 0) {
    std::vector<HostModel> hosts;
    hosts.reserve(fleet);
    // 64 host shapes; each host its own id (same length, so the same bytes).
    std::vector<HostModel> shapes[3];
    for (Kind kind : {kSteady, kDrifting, kChanging}) {
      for (int t = 0; t < 64; ++t)
        shapes[kind].push_back(Model(t, "host-000000", kind));
    }
    for (int i = 0; i < fleet; ++i) {
      const int p = i % 20;  // 10 of 20 steady, 9 drifting, 1 changing
      const Kind kind = p < 10 ? kSteady : p < 19 ? kDrifting : kChanging;
      HostModel m = shapes[kind][i % 64];
      m.host_id = absl::StrFormat("host-%06d", i);
      for (v1::HostReport& r : m.reports) r.set_host_id(m.host_id);
      for (ReportRow& r : m.rows) r.host_id = m.host_id;
      hosts.push_back(std::move(m));
    }
    const StoreFigures f = Drive(hosts, fleet_cycles, interval, false);
    const double beat_day =
        static_cast<double>(f.file_bytes) / fleet * 5760.0 / fleet_cycles;
    std::printf(
        "\nfleet: %d hosts (half steady, 45 %% drifting, 5 %% changing)\n"
        "heartbeats: %d cycles (%.1f h), %lld reports, %lld full rows, "
        "%.0f B/host/day%s, %.2fx Prometheus low end, %.0f rows/s, "
        "%.2f us CPU a row\n          tables: %s\n",
        fleet, fleet_cycles, fleet_cycles / 240.0,
        static_cast<long long>(f.reports), static_cast<long long>(f.full_rows),
        beat_day,
        fleet_cycles == 5760 ? ""
                             : " (scaled to a day; a short span counts "
                               "each host's first report whole)",
        beat_day / prom_lo, f.reports / f.store_seconds,
        f.store_cpu_seconds * 1e6 / f.reports, f.tables.c_str());
    PrintRollups(f, fleet, fleet_cycles / 5760.0);
    const int whole_cycles = absl::GetFlag(FLAGS_fleet_whole_cycles);
    if (whole_cycles > 0) {
      const StoreFigures w =
          Drive(hosts, whole_cycles, absl::ZeroDuration(), false);
      const double whole_day =
          static_cast<double>(w.file_bytes) / fleet * 5760.0 / whole_cycles;
      std::printf(
          "whole:      %d cycles (%.1f h), %lld reports, %.0f B/host/day "
          "(scaled to a day), %.0f rows/s, %.2f us CPU a row\n"
          "heartbeats / whole: %.1fx less disk, %.2fx the rows/s\n",
          whole_cycles, whole_cycles / 240.0, static_cast<long long>(w.reports),
          whole_day, w.reports / w.store_seconds,
          w.store_cpu_seconds * 1e6 / w.reports, whole_day / beat_day,
          (f.reports / f.store_seconds) / (w.reports / w.store_seconds));
    }
  }
  if (kind_of_store == "postgres") history_disk::StopPostgres();
  return 0;
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tracehealth::Main();
}
