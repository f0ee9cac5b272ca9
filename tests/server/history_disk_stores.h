// The stores history_disk_benchmark drives, and what it measures of them:
// a SQLite file in a temporary directory, or a database of a PostgreSQL
// cluster started once for the run.
//
// Thread safety: used by the benchmark's one thread.
#ifndef TRACEHEALTH_TESTS_SERVER_HISTORY_DISK_STORES_H_
#define TRACEHEALTH_TESTS_SERVER_HISTORY_DISK_STORES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "server/storage/report_store.h"
#include "tests/util/subprocess.h"

namespace tracehealth::history_disk {

struct StoreFigures {
  // What the agents send (the serialized reports plus gRPC's 5-byte message
  // prefix): every report whole, and with heartbeat forms (the agent's
  // HeartbeatFormer at the agent's default 6 h whole interval).
  int64_t wire_whole_bytes = 0;
  int64_t wire_form_bytes = 0;
  int64_t forms = 0;
  int64_t file_bytes = 0;
  int64_t reports = 0;
  int64_t full_rows = 0;
  double store_seconds = 0;
  double store_cpu_seconds = 0;  // the writing thread's
  std::string tables;            // bytes per table (dbstat)
  // Hourly rollups of every hour driven (a RollUp pass each simulated
  // hour): rows, bytes (table and index), the passes' time and CPU.
  int64_t rollup_rows = 0;
  int64_t rollup_bytes = 0;
  double rollup_seconds = 0;
  double rollup_cpu_seconds = 0;
};

// A store to drive, and how to measure it once closed.
struct DrivenStore {
  std::unique_ptr<server::ReportStore> store;
  std::function<void(StoreFigures&)> measure;
  std::shared_ptr<testing::ScopedTempDir> dir;  // SQLite's
};

// CPU seconds of the calling thread.
double ThreadCpuSeconds();

// A new SQLite store (its heartbeat interval `interval`); measured: the
// file and its log, the full rows, the bytes per table, the rollups'.
DrivenStore OpenSqlite(absl::Duration interval);

// A new database of the run's PostgreSQL cluster (started on first use);
// measured after VACUUM and CHECKPOINT: the relations' total size, the full
// rows, the bytes per table, the rollups'.
DrivenStore OpenPostgres(absl::Duration interval);

// Stops the cluster OpenPostgres started (no-op without one).
void StopPostgres();

}  // namespace tracehealth::history_disk

#endif  // TRACEHEALTH_TESTS_SERVER_HISTORY_DISK_STORES_H_
