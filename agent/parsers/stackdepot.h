// Parser for /sys/kernel/debug/stackdepot/stats (lib/stackdepot.c
// stats_show, 6.8+): "pools: %d" then one "name: %ld" line per counter
// (refcounted_allocations, refcounted_frees, refcounted_in_use,
// freelist_size, persistent_count, persistent_bytes; older kernels print
// fewer counters).
#ifndef TRACEHEALTH_AGENT_PARSERS_STACKDEPOT_H_
#define TRACEHEALTH_AGENT_PARSERS_STACKDEPOT_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

struct StackDepotCounters {
  uint64_t pools = 0;
  std::optional<uint64_t> refcounted_allocations;
  std::optional<uint64_t> refcounted_frees;
  std::optional<uint64_t> refcounted_in_use;
  std::optional<uint64_t> freelist_size;
  std::optional<uint64_t> persistent_count;
  std::optional<uint64_t> persistent_bytes;
};

// Errors (InvalidArgument): no "pools:" line, a line that is not
// "name: number", or a negative value. Unknown counter names are ignored.
absl::StatusOr<StackDepotCounters> ParseStackDepotStats(absl::string_view text);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_STACKDEPOT_H_
