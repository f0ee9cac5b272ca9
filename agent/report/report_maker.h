// ReportMaker: one agent cycle. Collects a HostSnapshot, runs the models
// (common/models PredictAll: numbers, risks and checks, no explanations; the
// caller explains what it prints) and wraps both in a HostReport with the host
// identity, labels, seq, the kernel log's new observed events and the
// agent's own health (cycle wall and CPU time, RSS, what each input cost to
// read, the kernel log's reading; the caller adds spool and ack figures).
//
// Thread safety: not thread-safe; one owner. `collector` is not owned.
#ifndef TRACEHEALTH_AGENT_REPORT_REPORT_MAKER_H_
#define TRACEHEALTH_AGENT_REPORT_REPORT_MAKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "agent/collect/collector.h"
#include "agent/events/kmsg_events.h"
#include "common/models/evaluate.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

inline constexpr char kAgentVersion[] = "0.1.0";

struct ReportOptions {
  std::string host_id;
  std::map<std::string, std::string> labels;
  double interval_seconds = 15;
  // models.features is the table the predictions use; with an operator's
  // override, `feature_table_override` holds its rows and every report
  // carries them, so that the server explains the predictions with the
  // same table.
  ModelOptions models;
  std::optional<v1::FeatureTableOverride> feature_table_override;
  // This host's calibration, carried by every report; models.calibration
  // holds its constants.
  std::optional<v1::Calibration> calibration;
  // The kernel log's observed events (not owned; null: not read). The
  // caller tells it when a report was delivered (KmsgEvents::Delivered).
  KmsgEvents* events = nullptr;
};

class ReportMaker {
 public:
  ReportMaker(Collector* collector, ReportOptions options,
              std::function<absl::Time()> clock);

  // Runs one cycle. `health` carries the spool/ack fields; cycle time, CPU
  // and RSS are filled in here. `seq` 0 leaves the seq unset (one-shot use).
  // observed_at is the clock once the snapshot is collected (after its last
  // read), not when the cycle began.
  v1::HostReport Make(uint64_t seq, const v1::AgentHealth& health);

 private:
  Collector* collector_;
  ReportOptions options_;
  std::function<absl::Time()> clock_;
  bool trimmed_ = false;
};

// CPU time (user + system) of the calling thread, in seconds.
double ThreadCpuSeconds();
// Resident set size of this process (from /proc/self/statm), if readable.
std::optional<uint64_t> ProcessRssBytes();
// Appends `costs` to `health` as input_costs rows, most bytes first.
void AddInputCosts(const InputCosts& costs, v1::AgentHealth* health);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_REPORT_REPORT_MAKER_H_
