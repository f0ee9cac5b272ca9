#include "common/report/material.h"

#include <algorithm>
#include <cmath>

namespace tracehealth {
namespace {

// The fields that do not count: they move from cycle to cycle on a steady
// host. A heartbeat carries seq, observed_at and threads.total; what the
// others change reaches the predictions, whose numbers count beyond the
// tolerance.
constexpr const char* kMovingFields[] = {
    // Identity of the report, carried by every heartbeat.
    "tracehealth.v1.HostReport.seq",
    "tracehealth.v1.HostReport.observed_at",
    // How the report was sent (whole or in heartbeat form), not what it says.
    "tracehealth.v1.HostReport.heartbeat",
    // Thread and fork counters, uptime: move every cycle (threads.total is
    // carried by the heartbeat; the attach predictions follow it).
    "tracehealth.v1.HostSnapshot.threads",
    // When fgraph was last seen active, links scanned, and the N_null bound
    // derived from the fork counter: times and counters.
    "tracehealth.v1.FgraphState.links_scanned_at",
    "tracehealth.v1.FgraphState.last_active_at",
    "tracehealth.v1.FgraphState.forks_at_last_active",
    "tracehealth.v1.FgraphState.null_threads_bound",
    "tracehealth.v1.FgraphState.null_threads_basis",
    // Stack depot usage counters (the limit, max_pools, counts): the stack
    // depot prediction's numbers follow them.
    "tracehealth.v1.StackDepotStats.pools",
    "tracehealth.v1.StackDepotStats.refcounted_allocations",
    "tracehealth.v1.StackDepotStats.refcounted_frees",
    "tracehealth.v1.StackDepotStats.refcounted_in_use",
    "tracehealth.v1.StackDepotStats.freelist_size",
    "tracehealth.v1.StackDepotStats.persistent_count",
    "tracehealth.v1.StackDepotStats.persistent_bytes",
    "tracehealth.v1.HostSnapshot.depot_history",
    "tracehealth.v1.HostSnapshot.trie",
    // vmalloc usage and when it was read: the vmap purge prediction follows.
    "tracehealth.v1.HostSnapshot.vmalloc",
    // The agent's own cost and progress (its failure counters and the kmsg
    // error count).
    "tracehealth.v1.AgentHealth.cycle_seconds",
    "tracehealth.v1.AgentHealth.cycle_cpu_seconds",
    "tracehealth.v1.AgentHealth.spool_depth",
    "tracehealth.v1.AgentHealth.last_acked_seq",
    "tracehealth.v1.AgentHealth.last_ack_at",
    "tracehealth.v1.AgentHealth.rss_bytes",
    "tracehealth.v1.AgentHealth.input_costs",
    "tracehealth.v1.KmsgHealth.records_total",
    "tracehealth.v1.KmsgHealth.events_total",
    "tracehealth.v1.KmsgHealth.events_pending",
    "tracehealth.v1.KmsgHealth.last_seq",
};

}  // namespace

Material MaterialOf(const v1::HostReport& report) {
  return MaterialOfWire(report.SerializeAsString());
}

bool SameMaterial(uint64_t digest_a, absl::Span<const float> numbers_a,
                  uint64_t digest_b, absl::Span<const float> numbers_b) {
  if (digest_a == 0 || digest_a != digest_b) return false;
  if (numbers_a.size() != numbers_b.size()) return false;
  for (size_t i = 0; i < numbers_a.size(); ++i) {
    const float a = numbers_a[i], b = numbers_b[i];
    if (a == b) continue;
    if (!std::isfinite(a) || !std::isfinite(b)) return false;
    if (std::fabs(a - b) >
        kMaterialTolerance * std::max(std::fabs(a), std::fabs(b))) {
      return false;
    }
  }
  return true;
}

SharedNumbers ShareNumbers(std::vector<float> numbers) {
  return std::make_shared<const std::vector<float>>(std::move(numbers));
}

bool SameMaterial(uint64_t digest_a, const SharedNumbers& numbers_a,
                  uint64_t digest_b, const SharedNumbers& numbers_b) {
  if (digest_a == 0 || digest_a != digest_b) return false;
  if (numbers_a == numbers_b) return true;
  const auto span = [](const SharedNumbers& n) {
    return n == nullptr ? absl::Span<const float>() : absl::MakeConstSpan(*n);
  };
  return SameMaterial(digest_a, span(numbers_a), digest_b, span(numbers_b));
}

std::vector<std::string> MovingFieldNames() {
  return {std::begin(kMovingFields), std::end(kMovingFields)};
}

}  // namespace tracehealth
