// ChangeFollower: keeps a replica's HostIndex up to date with what other
// replicas store, by polling a ChangeFeed (server/storage/change_feed.h)
// every `interval` on its own thread ("index-follow").
//
// The lag from another replica's commit to this index is at most one
// interval plus one poll (tests/replicas measure it end to end).
//
// Thread safety: Start and Stop from the owner's thread; polls() from any.
#ifndef TRACEHEALTH_SERVER_INDEX_CHANGE_FOLLOWER_H_
#define TRACEHEALTH_SERVER_INDEX_CHANGE_FOLLOWER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/index/host_index.h"
#include "server/storage/change_feed.h"

namespace tracehealth::server {

class ChangeFollower {
 public:
  // Not owned; both must outlive the follower. `log` gets one line per
  // error kind change (a database failover shows as a few failed polls).
  ChangeFollower(ChangeFeed* feed, HostIndex* index, absl::Duration interval,
                 std::function<void(const std::string&)> log);
  ~ChangeFollower();  // Stop()

  void Start();
  void Stop();

  // Polls completed, and hosts taken from the feed, so far.
  uint64_t polls() const { return polls_.load(); }
  uint64_t hosts_merged() const { return merged_.load(); }

 private:
  void PollOnce();

  ChangeFeed* const feed_;
  HostIndex* const index_;
  const absl::Duration interval_;
  const std::function<void(const std::string&)> log_;
  absl::Notification stop_;
  std::thread thread_;
  std::atomic<uint64_t> polls_{0};
  std::atomic<uint64_t> merged_{0};
  std::string last_error_;  // follower thread only
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_CHANGE_FOLLOWER_H_
