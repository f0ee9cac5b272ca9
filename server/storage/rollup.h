// Hourly rollups (RollupRow, report_store.h): the one owner of their
// arithmetic, which both stores' ReportStore::RollUp use. A rollup is one
// host's reports (full reports and heartbeats, as ReadHostHistory gives
// them) observed in one hour [h, h + 1 h), h a multiple of an hour since
// the Unix epoch:
// - reports: how many; first_seq / last_seq: the seq of the oldest and of
//   the newest, by observation time, then seq;
// - threads, attach_latency_seconds (kprobe_multi_return),
//   pool_budget_ratio, purge_seconds: the smallest and largest value of the
//   reports that carry the column, and the value of the newest report that
//   carries it; all three absent when none does (never 0 for absent);
// - worst_risk: the largest value (the Risk enum grows with severity) and
//   the newest report's.
// The order rows are added in does not matter; a row added twice counts
// twice (the caller adds each stored report once).
//
// Thread safety: RollupFolder is used by one thread; the functions are pure.
#ifndef TRACEHEALTH_SERVER_STORAGE_ROLLUP_H_
#define TRACEHEALTH_SERVER_STORAGE_ROLLUP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

inline constexpr int64_t kRollupHourNs = 3600LL * 1000000000LL;

// The start of the hour holding `ns` (rounded down, also before 1970).
int64_t HourStart(int64_t ns);

// snapshot.threads.total of a serialized HostReport; nullopt when it does
// not parse or has none. (Full rows carry their threads only in the report;
// a heartbeat's row has them in ReportRow::threads.)
std::optional<uint64_t> ThreadsOfReport(absl::string_view blob);

// "h@3600000000000 n=5 seq=1..5 threads=90/110/97 latency=... risk=3/3"
// (min/max/last, "-" for absent), for logs and test failures.
std::string RollupRowString(const RollupRow& row);
// gtest prints a RollupRow with this.
void PrintTo(const RollupRow& row, std::ostream* os);

class RollupFolder {
 public:
  // Folds `row` into the rollup of (row.host_id, HourStart(observed)),
  // from its seq, observed_at_ns, worst_risk, threads and the three
  // prediction columns.
  void Add(const ReportRow& row);
  // The rollups so far, by host, then hour; the folder is empty after.
  std::vector<RollupRow> Take();

 private:
  using Key = std::pair<int64_t, uint64_t>;  // (observed_at_ns, seq)
  template <typename T>
  struct Column {
    RollupRange<T> range;
    Key last_key;
    void Add(const std::optional<T>& v, const Key& key);
  };
  struct Hour {
    RollupRow row;
    Key first_key;
    Key last_key;
    Column<uint64_t> threads;
    Column<double> attach;
    Column<double> pool;
    Column<double> purge;
  };
  std::map<std::pair<std::string, int64_t>, Hour> hours_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_ROLLUP_H_
