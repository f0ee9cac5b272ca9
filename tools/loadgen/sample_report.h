// Realistic HostReports for the load generator, benchmarks and integration
// tests: a plausible snapshot (kernel, threads, fgraph, thresholds, CPUs,
// stack depot, vmalloc) whose predictions come from the real models.
#ifndef TRACEHEALTH_TOOLS_LOADGEN_SAMPLE_REPORT_H_
#define TRACEHEALTH_TOOLS_LOADGEN_SAMPLE_REPORT_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {

struct SampleHost {
  std::string host_id;
  uint64_t threads = 100000;
  std::string kernel_release = "6.16.3";
  v1::PreemptMode preempt = v1::PREEMPT_MODE_NONE;
  bool fgraph_active = false;
  uint32_t cpus = 64;
  std::string role = "db";
  std::string rack = "r1";
};

// A snapshot of `host`: every input set, N_null bounded by threads (fgraph
// never active since boot) unless fgraph is active.
v1::HostSnapshot SampleSnapshot(const SampleHost& host);

// A report as an agent sends it: SampleSnapshot + PredictAll (numbers, no
// explanations: common/models/explain.h), labels role/rack, 30 s interval.
v1::HostReport SampleReport(const SampleHost& host, uint64_t seq,
                            absl::Time observed_at);

// Appends a threshold check of `kind` with `margin` (and whether it
// applies) to `checks`; returns it.
v1::ThresholdCheck* AddCheck(
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks,
    v1::ThresholdCheck::Kind kind, double margin, bool applies);

// The `i`-th host of a synthetic fleet ("host-000042"), with threads, kernel,
// preemption and role varied deterministically by `i`.
SampleHost FleetHost(int i);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_TOOLS_LOADGEN_SAMPLE_REPORT_H_
