// Delivers alerts to Alertmanager's v2 API (POST /api/v2/alerts).
//
// Update() records the latest state of each (rule, host) alert and returns at
// once; a background thread posts changed alerts promptly and re-sends firing
// ones every `resend_interval` (Alertmanager forgets alerts whose endsAt
// passes: firing alerts carry endsAt = now + 4 * resend_interval). Resolved
// alerts are posted with endsAt = resolved_at until one post succeeds, then
// forgotten. Failed posts are retried with backoff (1 s doubling to 1 min)
// and counted; they never block the caller. At most `max_alerts` alerts are
// tracked; beyond that the oldest resolved ones are dropped (counted).
//
// Thread safety: all public methods may be called concurrently.
#ifndef TRACEHEALTH_SERVER_ALERTS_ALERTMANAGER_NOTIFIER_H_
#define TRACEHEALTH_SERVER_ALERTS_ALERTMANAGER_NOTIFIER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth {

class AlertmanagerNotifier {
 public:
  struct Options {
    // Base URL, e.g. "http://127.0.0.1:9093".
    std::string url;
    absl::Duration resend_interval = absl::Minutes(1);
    absl::Duration timeout = absl::Seconds(5);
    // How often the sender thread wakes to look for work.
    absl::Duration poll = absl::Milliseconds(200);
    size_t max_alerts = 100000;
    // generatorURL on every alert; Alertmanager requires an absolute URL
    // (http://...) or nothing.
    std::string generator_url;
  };

  struct Stats {
    uint64_t posts_ok = 0;
    uint64_t posts_failed = 0;
    uint64_t alerts_sent = 0;
    uint64_t alerts_dropped = 0;
    std::string last_error;
  };

  // `now` is the clock (injected for tests). Starts the sender thread.
  AlertmanagerNotifier(Options options,
                       std::function<absl::Time()> now = absl::Now);
  // Stops the sender thread after one last attempt to deliver pending work.
  ~AlertmanagerNotifier();

  AlertmanagerNotifier(const AlertmanagerNotifier&) = delete;
  AlertmanagerNotifier& operator=(const AlertmanagerNotifier&) = delete;

  // Records new states; pending alerts are ignored (Alertmanager only hears
  // of firing and resolved ones).
  void Update(const std::vector<v1::Alert>& alerts);

  Stats stats() const;

  // The JSON body Alertmanager gets for `alerts` at time `now` (exposed for
  // tests).
  static std::string ToJson(const std::vector<v1::Alert>& alerts,
                            absl::Time now, absl::Duration resend_interval,
                            const std::string& generator_url);

 private:
  struct Entry {
    v1::Alert alert;
    bool dirty = true;
    absl::Time last_sent = absl::InfinitePast();
  };
  void Run();
  // One delivery attempt of everything due; returns false on failure.
  bool SendDue();

  const Options options_;
  const std::function<absl::Time()> now_;
  mutable absl::Mutex mu_;
  std::map<std::pair<std::string, std::string>, Entry> entries_
      ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_ALERTMANAGER_NOTIFIER_H_
