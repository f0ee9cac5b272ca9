#include "server/index/change_follower.h"

#include <pthread.h>

#include <utility>

namespace tracehealth::server {

ChangeFollower::ChangeFollower(ChangeFeed* feed, HostIndex* index,
                               absl::Duration interval,
                               std::function<void(const std::string&)> log)
    : feed_(feed), index_(index), interval_(interval), log_(std::move(log)) {}

ChangeFollower::~ChangeFollower() { Stop(); }

void ChangeFollower::Start() {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "index-follow");
    do {
      PollOnce();
    } while (!stop_.WaitForNotificationWithTimeout(interval_));
  });
}

void ChangeFollower::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void ChangeFollower::PollOnce() {
  absl::Status bad_row;
  absl::Status st = feed_->Poll([&](LatestRow& row) {
    absl::Status m = index_->Merge(row);
    if (m.ok()) {
      merged_++;
    } else if (bad_row.ok()) {
      bad_row = m;
    }
  });
  if (st.ok()) st = bad_row;
  polls_++;
  // Each kind of failure once, and its end.
  const std::string error = st.ok() ? "" : st.ToString();
  if (error != last_error_) {
    log_(error.empty() ? "change feed: polling again"
                       : "change feed: " + error);
    last_error_ = error;
  }
}

}  // namespace tracehealth::server
