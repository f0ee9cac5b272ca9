#include "agent/report/report_maker.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/proto_time.h"

namespace tracehealth::agent {

double ThreadCpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

std::optional<uint64_t> ProcessRssBytes() {
  // The agent's own process, always on the real /proc (not the host root).
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return std::nullopt;
  unsigned long size = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return std::nullopt;
  return static_cast<uint64_t>(resident) *
         static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

void AddInputCosts(const InputCosts& costs, v1::AgentHealth* health) {
  std::vector<const std::pair<std::string, IoCost>*> rows;
  rows.reserve(costs.size());
  for (const auto& row : costs) rows.push_back(&row);
  // Most bytes first, then most system calls, then by name: the expensive
  // inputs lead and the order is the same for the same costs.
  std::sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    if (a->second.bytes != b->second.bytes)
      return a->second.bytes > b->second.bytes;
    if (a->second.syscalls != b->second.syscalls)
      return a->second.syscalls > b->second.syscalls;
    return a->first < b->first;
  });
  for (const auto* row : rows) {
    v1::InputCost* c = health->add_input_costs();
    c->set_input(row->first);
    c->set_opens(row->second.opens);
    c->set_read_calls(row->second.read_calls);
    c->set_bytes_read(row->second.bytes);
    c->set_syscalls(row->second.syscalls);
  }
}

ReportMaker::ReportMaker(Collector* collector, ReportOptions options,
                         std::function<absl::Time()> clock)
    : collector_(collector),
      options_(std::move(options)),
      clock_(std::move(clock)) {}

v1::HostReport ReportMaker::Make(uint64_t seq, const v1::AgentHealth& health) {
  const absl::Time wall_start = absl::Now();
  const double cpu_start = ThreadCpuSeconds();

  v1::HostReport r;
  r.set_host_id(options_.host_id);
  if (seq > 0) r.set_seq(seq);
  r.set_agent_version(kAgentVersion);
  r.set_model_version(kModelVersion);
  for (const auto& [k, v] : options_.labels) (*r.mutable_labels())[k] = v;
  r.set_interval_seconds(options_.interval_seconds);
  if (options_.calibration) *r.mutable_calibration() = *options_.calibration;
  if (options_.feature_table_override) {
    *r.mutable_feature_table_override() = *options_.feature_table_override;
  }
  *r.mutable_snapshot() = collector_->Collect();
  // Observed when the last input was read: a read can block for as long as
  // an attach holds its lock (trace_types_lock, ftrace_lock), and the
  // snapshot then shows the host after the attach, not before it. The
  // server compares a kernel event logged during that wait with the report
  // current before it (server/events/event_recorder.h).
  *r.mutable_observed_at() = ToProto(clock_());
  PredictAllInto(r.snapshot(), options_.models, r.mutable_predictions());

  if (!trimmed_) {
    // The first evaluation builds the models' one-time tables (e.g. the
    // generated trie workload) and frees the scratch memory; give it back to
    // the system instead of keeping it in the heap for the agent's lifetime.
    malloc_trim(0);
    trimmed_ = true;
  }
  v1::AgentHealth* h = r.mutable_health();
  *h = health;
  if (options_.events != nullptr) options_.events->Fill(&r);
  h->set_cycle_seconds(absl::ToDoubleSeconds(absl::Now() - wall_start));
  h->set_cycle_cpu_seconds(ThreadCpuSeconds() - cpu_start);
  std::optional<uint64_t> rss = ProcessRssBytes();
  if (rss.has_value()) h->set_rss_bytes(*rss);
  AddInputCosts(collector_->cycle_costs(), h);
  return r;
}

}  // namespace tracehealth::agent
