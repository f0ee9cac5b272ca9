// One calibration of the fgraph attach model on this host (docs/design.md
// §13.1, tracehealth-agent --calibrate): an explicit, bounded, real attach.
//
//   1. Refuses (with the reason) unless tracefs is mounted and writable,
//      current_tracer is nop and tracefs shows no other fgraph user
//      (agent/collect/tracefs_users.h), a rarely called function exists in
//      available_filter_functions, and the predicted walk fits the budget.
//   2. Chooses K (or checks the given one): the largest K whose predicted
//      first enable (the current model: this host's stored calibration or
//      the seed default, with this host's thread count) fits the budget.
//      The points are K_j = ceil(j * K / P), j = 1..P, P = `points` or
//      fewer, so that K_1 exceeds the batch B (with K_j <= B a first
//      enable is one pass and measures no walk); K <= B is refused.
//   3. Writes the journal (journal.h) under the calibration lock, limits
//      set_ftrace_filter to the one function, enables function_graph and
//      writes nop again, untimed (the warm-up: every thread on the host
//      gets its shadow stack, whatever the NULL-thread bound said, and a
//      first-ever enable's one-time work is done). Then `repeats` rounds,
//      each over the points in order: starts K_j idle threads, times
//      `function_graph` written to current_tracer (first enable: the walk
//      hands out exactly the K_j fresh stacks, at the tail), writes nop,
//      times a second enable (every stack in place: the fixed cost and one
//      pass), writes nop, ends the threads. The shortest first and second
//      enable of each point are kept (interference only adds time). The
//      budget check of step 2 prices the K threads plus every thread the
//      bound allows, which bounds each enable.
//   4. Restores the previous filter and tracer (whatever happened: an error
//      or `stop` notified by a signal), ends the threads, removes the
//      journal, runs the user-space walk (memory_walk below) and fits
//      c_visit, c_pass and the fixed cost over the points with its visit
//      levels (common/models/fgraph/calibration_math.h FitCalibration).
//
// Tracefs paths are host paths under HostFs's root; on a fixture tree the
// writes just change files (timings then mean nothing).
//
// Thread safety: one Run() at a time; `fs`, `features` and `stop` are not
// owned and must outlive the calibrator.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_CALIBRATOR_H_
#define TRACEHEALTH_AGENT_CALIBRATE_CALIBRATOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/kernel/feature_table.h"
#include "common/models/model_options.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/calibration.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

// More threads than this are never started.
inline constexpr uint64_t kMaxCalibrationThreads = 32768;

struct CalibratorOptions {
  // Where the journal, the lock and the collector's state live; required.
  std::string state_dir;
  std::string host_id;
  double budget_seconds = 1.0;
  // 0: chosen (step 2); otherwise refused when its prediction exceeds the
  // budget.
  uint64_t threads = 0;
  // Points (thread counts) measured, at most; at least 1.
  uint32_t points = 3;
  // Rounds over the points; at least 1.
  uint32_t repeats = 2;
  // The options the prediction uses: the host's (host_pricing.h
  // HostModelOptions: its stored calibration, else the seed default) and
  // the feature table the collector uses too.
  ModelOptions models;
  // Test hook: after the first enable (journal written, threads up, tracer
  // and filter changed), wait this long or until `stop`.
  absl::Duration hold_for_test = absl::ZeroDuration();
  // Progress lines for the agent's log (what is about to be measured).
  std::function<void(const std::string&)> log;
  // The user-space walk (memory_walk.h WalkMemory), run after the enables
  // with sizes up to `max_tasks`: 4 times the largest point's K or twice
  // the threads at it, whichever is more. Its points go into the
  // calibration (memory_walk) and its levels into the fit (c_visit is then
  // the price at its smallest size). Unset, or failing (logged): one price
  // a visit.
  std::function<absl::StatusOr<std::vector<v1::MemoryWalkPoint>>(
      uint64_t max_tasks)>
      memory_walk;
};

struct CalibrationOutcome {
  enum Kind { kCalibrated, kRefused, kError };
  Kind kind = kError;
  // Why it was refused or failed.
  std::string reason;
  v1::Calibration calibration;  // kCalibrated
};

class Calibrator {
 public:
  // `monotonic_ns` times the enables (steady clock); `clock` stamps the
  // result.
  Calibrator(const HostFs* fs, CalibratorOptions options,
             std::function<int64_t()> monotonic_ns,
             std::function<absl::Time()> clock, absl::Notification* stop);

  CalibrationOutcome Run();

 private:
  struct Plan;
  // Steps 1 and 2; a refusal or error in `*outcome` when it returns false.
  bool Prepare(const v1::HostSnapshot& snapshot, Plan* plan,
               CalibrationOutcome* outcome);
  // Step 3 with the restore of step 4; fills the timings.
  absl::Status Measure(const Plan& plan, v1::Calibration* c);
  // The untimed warm-up (journal written, no thread started yet).
  absl::Status WarmUp(const Plan& plan);
  // One point's two timed enables (journal written, warmed up, its threads
  // up): keeps the shorter of each in `point`.
  absl::Status TimeEnables(const Plan& plan, bool first_round,
                           v1::CalibrationPoint* point);
  // Writes `tracer` to current_tracer and returns how long the write took.
  absl::StatusOr<double> TimedWrite(const std::string& path,
                                    const std::string& tracer);

  const HostFs* fs_;
  CalibratorOptions options_;
  std::function<int64_t()> monotonic_ns_;
  std::function<absl::Time()> clock_;
  absl::Notification* stop_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_CALIBRATOR_H_
