#include "server/storage/history_window.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "server/storage/heartbeat_policy.h"

namespace tracehealth::server {

void AddBeatEntries(const std::string& host_id, const std::vector<Beat>& beats,
                    int64_t base, int64_t from_ns, int64_t to_ns,
                    std::vector<HistoryEntry>* out) {
  for (const Beat& b : beats) {
    if (b.observed_at_ns < from_ns || b.observed_at_ns >= to_ns) continue;
    HistoryEntry e;
    e.row = RowOfBeat(host_id, b);
    e.base = base;
    out->push_back(std::move(e));
  }
}

size_t OrderAndStride(std::vector<HistoryEntry>* entries, size_t max_rows) {
  std::sort(entries->begin(), entries->end(),
            [](const HistoryEntry& a, const HistoryEntry& b) {
              return std::tie(a.row.observed_at_ns, a.row.seq) <
                     std::tie(b.row.observed_at_ns, b.row.seq);
            });
  if (entries->empty()) return 0;
  return (entries->size() + max_rows - 1) / max_rows;
}

}  // namespace tracehealth::server
