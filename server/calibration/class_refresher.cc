#include "server/calibration/class_refresher.h"

#include <pthread.h>

#include <utility>

namespace tracehealth::server {

ClassRefresher::ClassRefresher(CalibrationStore* store,
                               ClassCalibrations* classes,
                               absl::Duration interval,
                               std::function<void(const std::string&)> log)
    : store_(store),
      classes_(classes),
      interval_(interval),
      log_(std::move(log)) {}

ClassRefresher::~ClassRefresher() { Stop(); }

void ClassRefresher::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "class-refresh");
    while (!stop_.WaitForNotificationWithTimeout(interval_)) RefreshOnce();
  });
}

void ClassRefresher::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

absl::Status ClassRefresher::RefreshOnce() {
  absl::Status st = classes_->LoadFrom(*store_);
  refreshes_++;
  // Each kind of failure once, and its end: a blob that does not parse
  // would otherwise be logged every interval.
  const std::string error = st.ok() ? "" : st.ToString();
  absl::MutexLock lock(&mu_);
  if (error != last_error_) {
    log_(error.empty() ? "calibrations: loading again"
                       : "calibrations: " + error);
    last_error_ = error;
  }
  return st;
}

}  // namespace tracehealth::server
