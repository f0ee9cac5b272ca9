// Delivers alerts to Alertmanager's v2 API (POST /api/v2/alerts), sized for
// a fleet's worth of alerts at once.
//
// Update() records the latest state of each (rule, host) alert and returns at
// once; a sender thread runs a delivery round every `poll`:
// - Due: every changed alert (firing or resolved, promptly), and firing ones
//   not sent for `resend_interval` (Alertmanager forgets alerts whose endsAt
//   passes: firing alerts carry endsAt = now + 4 * resend_interval). Resends
//   are spread over the interval: a round resends at most
//   ceil(firing * elapsed / resend_interval) alerts (elapsed: since the
//   previous round), those sent longest ago first, so 70,000 alerts that
//   fired together are resent a share at a time, not in one burst.
// - Batches (BatchRanges): at most `max_batch_alerts` alerts and
//   `max_batch_bytes` of JSON a post (an alert larger than that alone), at
//   most `max_concurrent_posts` posts in flight.
// - A failed post (no connection, timeout, any non-2xx status such as 429 or
//   503) leaves its alerts due and stops the round; the next round waits as
//   RetryPolicy says (1 s doubling to 1 min, or the response's Retry-After,
//   capped at 5 min). Posts that succeeded in the round stay delivered.
// - Resolved alerts are posted with endsAt = resolved_at until one post
//   succeeds, then forgotten.
// - Bounded memory: at most `max_alerts` alerts are tracked. A new alert
//   past the bound first evicts the resolved alert resolved longest ago
//   (Alertmanager then ends it at its last endsAt instead of now); with no
//   resolved alert to evict the new one is dropped: Alertmanager does not
//   hear of it (the server's store, /metrics and query API still do). Both
//   are counted in Stats::alerts_dropped
//   (tracehealth_alertmanager_alerts_dropped_total).
//
// Thread safety: all public methods may be called concurrently.
#ifndef TRACEHEALTH_SERVER_ALERTS_ALERTMANAGER_NOTIFIER_H_
#define TRACEHEALTH_SERVER_ALERTS_ALERTMANAGER_NOTIFIER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "server/alerts/http_client.h"
#include "server/alerts/retry_policy.h"

namespace tracehealth {

class AlertmanagerNotifier {
 public:
  struct Options {
    // Base URL, e.g. "http://127.0.0.1:9093".
    std::string url;
    absl::Duration resend_interval = absl::Minutes(1);
    absl::Duration timeout = absl::Seconds(5);
    // How often the sender thread runs a round.
    absl::Duration poll = absl::Milliseconds(200);
    size_t max_alerts = 300000;
    size_t max_batch_alerts = 1000;
    size_t max_batch_bytes = 1 << 20;
    size_t max_concurrent_posts = 4;
    RetryPolicy::Options retry;
    // generatorURL on every alert; Alertmanager requires an absolute URL
    // (http://...) or nothing.
    std::string generator_url;
    // False: no sender thread; the owner calls Round() (tests).
    bool background = true;
  };

  struct Stats {
    uint64_t posts_ok = 0;
    uint64_t posts_failed = 0;
    uint64_t alerts_sent = 0;
    uint64_t alerts_dropped = 0;
    // Alerts due (changed, or firing and due for a resend) at the start
    // of the last round.
    uint64_t alerts_waiting = 0;
    std::string last_error;
  };

  // POSTs a JSON body to a URL (HttpPostJson unless injected).
  using Poster = std::function<absl::StatusOr<HttpResponse>(
      const std::string& url, const std::string& body)>;

  // `now` is the clock (injected for tests). Starts the sender thread
  // unless options.background is false.
  AlertmanagerNotifier(Options options,
                       std::function<absl::Time()> now = absl::Now,
                       Poster post = nullptr);
  // Stops the sender thread after one last attempt to deliver pending work.
  ~AlertmanagerNotifier();

  AlertmanagerNotifier(const AlertmanagerNotifier&) = delete;
  AlertmanagerNotifier& operator=(const AlertmanagerNotifier&) = delete;

  // Records new states; pending alerts are ignored (Alertmanager only hears
  // of firing and resolved ones).
  void Update(const std::vector<v1::Alert>& alerts);

  // One delivery round at now() as described above; does nothing before
  // the retry time of a failure unless `final`.
  void Round(bool final = false);

  Stats stats() const;

  // The JSON body Alertmanager gets for `alerts` at time `now` (exposed for
  // tests).
  static std::string ToJson(const std::vector<v1::Alert>& alerts,
                            absl::Time now, absl::Duration resend_interval,
                            const std::string& generator_url);

  // Splits alerts whose JSON objects have `sizes` bytes into consecutive
  // [begin, end) batches of at most `max_alerts` alerts and a body ("[" +
  // objects joined by "," + "]") of at most `max_bytes` bytes; an alert too
  // large for any batch is alone in its own.
  static std::vector<std::pair<size_t, size_t>> BatchRanges(
      const std::vector<size_t>& sizes, size_t max_alerts, size_t max_bytes);

 private:
  using Key = std::pair<std::string, std::string>;  // rule, host
  struct Entry {
    v1::Alert alert;
    uint64_t version = 0;  // bumped by each Update
    bool dirty = true;
    absl::Time last_sent = absl::InfinitePast();
  };
  struct Due {
    Key key;
    v1::Alert alert;
    uint64_t version;
  };
  void Run();
  // What this round posts; sets stats_.alerts_waiting.
  std::vector<Due> CollectDue(absl::Time now, absl::Duration since_last_round)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Posts `bodies` with at most max_concurrent_posts in flight; returns for
  // each whether it was delivered (a failure stops further posts: those
  // are false too) and the Retry-After of a refusal.
  std::vector<bool> PostAll(const std::vector<std::string>& bodies,
                            std::optional<absl::Duration>* retry_after);
  void Forget(const Key& key, const Entry& e)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const std::function<absl::Time()> now_;
  const Poster post_;
  absl::Mutex round_mu_;  // one Round at a time
  RetryPolicy retry_ ABSL_GUARDED_BY(round_mu_);
  absl::Time last_round_ ABSL_GUARDED_BY(round_mu_);
  mutable absl::Mutex mu_;
  std::map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // Resolved entries by resolved_at: the eviction order.
  std::set<std::tuple<absl::Time, std::string, std::string>> resolved_
      ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_SERVER_ALERTS_ALERTMANAGER_NOTIFIER_H_
