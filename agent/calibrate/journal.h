// The calibration journal (proto CalibrationJournal, JSON in
// STATE_DIR/calibration.journal): what calibration found in tracefs before
// it wrote anything, so that whatever ends the calibration — an error, a
// signal, SIGKILL — the tracer and the filter go back. The journal is
// written durably before the first write to tracefs and removed after the
// restore; an agent that starts (any mode) and finds one restores from it
// (RecoverInterruptedCalibration).
//
// A calibration holds an exclusive flock(2) on STATE_DIR/calibration.lock
// while it runs (released by the kernel when the process dies), so a start
// beside a running calibration leaves its journal alone.
//
// Thread safety: functions of the files; one CalibrationLock per process.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_JOURNAL_H_
#define TRACEHEALTH_AGENT_CALIBRATE_JOURNAL_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/calibration.pb.h"

namespace tracehealth::agent {

inline constexpr char kJournalFile[] = "calibration.journal";
inline constexpr char kLockFile[] = "calibration.lock";

std::string JournalPath(absl::string_view state_dir);

absl::Status WriteJournal(absl::string_view state_dir,
                          const v1::CalibrationJournal& journal);
// nullopt when there is none; InvalidArgument for one that does not parse.
absl::StatusOr<std::optional<v1::CalibrationJournal>> ReadJournal(
    absl::string_view state_dir);
absl::Status RemoveJournal(absl::string_view state_dir);

// What to write to set_ftrace_filter to get `filter` (its content as read)
// back: its lines but comments ("#### all functions enabled ####" is an
// empty filter), one per line.
std::string FilterToRestore(absl::string_view filter);

// Writes the journal's state back under `root`: nop to current_tracer (so
// no filter change re-patches a live tracer), the filter, then the tracer
// if it was not nop.
absl::Status RestoreFromJournal(absl::string_view root,
                                const v1::CalibrationJournal& journal);

class CalibrationLock {
 public:
  // Unavailable when another process holds it.
  static absl::StatusOr<std::unique_ptr<CalibrationLock>> TryAcquire(
      absl::string_view state_dir);
  ~CalibrationLock();
  CalibrationLock(const CalibrationLock&) = delete;
  CalibrationLock& operator=(const CalibrationLock&) = delete;

 private:
  explicit CalibrationLock(int fd) : fd_(fd) {}
  int fd_;
};

// At an agent start: when STATE_DIR holds a journal and no calibration is
// running, restores from it and removes it. Returns what was done, for the
// log ("" when there was nothing to do); an error leaves the journal for
// the next start.
absl::StatusOr<std::string> RecoverInterruptedCalibration(
    absl::string_view root, absl::string_view state_dir);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_JOURNAL_H_
