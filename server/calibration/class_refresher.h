// ClassRefresher: keeps a replica's hardware classes (class_calibrations.h)
// up to date with the calibrations other replicas sharing its store took,
// by loading the store's calibrations again every `interval` on its own
// thread ("class-refresh").
//
// Only replicas on a shared store (PostgreSQL) run one: with SQLite one
// server owns the store and every calibration arrives through its own
// SubmitCalibration. A calibration another replica stored is in this
// replica's classes at most one interval plus one load after it was
// stored (tests/replicas/calibration_refresh_test measures it end to end).
// Loading again counts nothing twice (ClassCalibrations::LoadFrom), so a
// class's version grows only when a calibration new to this replica came.
//
// Thread safety: Start and Stop from the owner's thread; RefreshOnce and
// refreshes() from any.
#ifndef TRACEHEALTH_SERVER_CALIBRATION_CLASS_REFRESHER_H_
#define TRACEHEALTH_SERVER_CALIBRATION_CLASS_REFRESHER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/calibration/class_calibrations.h"
#include "server/storage/calibration_store.h"

namespace tracehealth::server {

class ClassRefresher {
 public:
  // Not owned; both must outlive the refresher. `log` gets one line per
  // error kind change (a database failover shows as a few failed loads).
  ClassRefresher(CalibrationStore* store, ClassCalibrations* classes,
                 absl::Duration interval,
                 std::function<void(const std::string&)> log);
  ~ClassRefresher();  // Stop()

  // Loads every interval, the first one interval after Start (the server
  // has loaded the classes at start), until Stop.
  void Start();
  void Stop();

  // Loads the store's calibrations into the classes once; the store's
  // error, or DataLoss for a calibration that does not parse (the rest are
  // loaded).
  absl::Status RefreshOnce();

  // Loads completed so far (failed ones too).
  uint64_t refreshes() const { return refreshes_.load(); }

 private:
  CalibrationStore* const store_;
  ClassCalibrations* const classes_;
  const absl::Duration interval_;
  const std::function<void(const std::string&)> log_;
  absl::Notification stop_;
  std::thread thread_;
  std::atomic<uint64_t> refreshes_{0};
  absl::Mutex mu_;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_CALIBRATION_CLASS_REFRESHER_H_
