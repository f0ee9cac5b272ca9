// A host's history window as both stores build it (ReportStore::
// ReadHostHistory): full reports and heartbeats merged into one list,
// ordered, and thinned to every k-th point.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_SERVER_STORAGE_HISTORY_WINDOW_H_
#define TRACEHEALTH_SERVER_STORAGE_HISTORY_WINDOW_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/storage/heartbeat_chunk.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// One point of the window: a full report's or a heartbeat's row, and the
// store's key of the full report whose bytes it shows (a SQLite row id, a
// PostgreSQL seq).
struct HistoryEntry {
  ReportRow row;
  int64_t base = 0;
};

// Appends to `out` the beats of one chunk on full report `base` that were
// observed in [from_ns, to_ns), as rows of `host_id` (RowOfBeat).
void AddBeatEntries(const std::string& host_id, const std::vector<Beat>& beats,
                    int64_t base, int64_t from_ns, int64_t to_ns,
                    std::vector<HistoryEntry>* out);

// Orders `entries` by observation time, then seq, and returns k =
// ceil(n / max_rows) (max_rows >= 1): the window is every k-th entry from
// the first. 0 when `entries` is empty.
size_t OrderAndStride(std::vector<HistoryEntry>* entries, size_t max_rows);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_HISTORY_WINDOW_H_
