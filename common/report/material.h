// What of a report counts as a change: a report whose material content
// equals the host's stored report may be stored as a heartbeat
// (server/storage/heartbeat_chunk.h) instead of whole.
//
// Every field of a HostReport counts, exactly, except the ones listed in
// material.cc's kMovingFields (each with its reason: numbers that move
// every cycle on a steady host and whose effect reaches the predictions),
// and the numbers inside `predictions`, which count beyond kTolerance
// (relative). In short, what counts: host id, agent and model version,
// labels, interval, the kernel (release, version, arch, preemption, config
// options, page size, cmdline), fgraph users and links, filter counts,
// thresholds, CPUs, the stack depot's limit, unknown and not-applicable
// inputs, every risk and flag of the predictions and their numbers beyond
// the tolerance, the agent's failure counters and kmsg error, the
// feature-table override, observed events, the calibration. A new proto
// field counts until it is listed as moving (material_test walks every field
// of the schema).
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_REPORT_MATERIAL_H_
#define TRACEHEALTH_COMMON_REPORT_MATERIAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth {

// Relative tolerance of the predictions' numbers: |a - b| <= kTolerance *
// max(|a|, |b|). 5 %: a thread count wandering by a few percent moves the
// attach latency about as much; a risk level change counts regardless.
inline constexpr double kMaterialTolerance = 0.05;

struct Material {
  // Hash of everything that counts exactly (never 0: 0 means "unknown").
  uint64_t digest = 0;
  // The predictions' numbers, in schema order, compared with the tolerance
  // (as floats: the tolerance is far coarser, and a store keeps them per
  // host).
  std::vector<float> numbers;
};

// The material content of the encoded HostReport `report`, read from its
// wire bytes (no parse): the walk of report_scan.h, which ingest runs once
// for the wire check, the head and this together (ScanReport). Digest 0
// when the bytes do not decode.
Material MaterialOfWire(absl::string_view report);
// The same of a parsed report (serialized first).
Material MaterialOf(const v1::HostReport& report);

// Whether reports with these contents are the same: equal digests (neither
// 0), as many numbers, each within kMaterialTolerance.
bool SameMaterial(uint64_t digest_a, absl::Span<const float> numbers_a,
                  uint64_t digest_b, absl::Span<const float> numbers_b);

// A material content's numbers as the server keeps them: shared by the rows
// of the reports that have them (a report rebuilt from a heartbeat form has
// its base's); null: none.
using SharedNumbers = std::shared_ptr<const std::vector<float>>;
SharedNumbers ShareNumbers(std::vector<float> numbers);

// The same with shared numbers: the same numbers (one object) under equal
// known digests are the same without comparing them.
bool SameMaterial(uint64_t digest_a, const SharedNumbers& numbers_a,
                  uint64_t digest_b, const SharedNumbers& numbers_b);

// The full names of the fields that do not count (material.cc's list).
std::vector<std::string> MovingFieldNames();

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_REPORT_MATERIAL_H_
