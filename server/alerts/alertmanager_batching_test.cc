// The notifier's rules at fleet size, with an injected clock and poster (no
// sender thread): batch sizes, concurrency, spread resends, the bound on
// tracked alerts and the backoff sequence. Delivery to a real Alertmanager:
// alertmanager_notifier_test and //tests/e2e:alert_storm_test.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/alerts/alertmanager_notifier.h"

namespace tracehealth {
namespace {

using ::google::protobuf::util::TimeUtil;

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

v1::Alert Firing(int host) {
  v1::Alert a;
  a.set_rule("Stall");
  a.set_host_id(absl::StrCat("h", host));
  a.set_state(v1::ALERT_STATE_FIRING);
  (*a.mutable_labels())["alertname"] = "Stall";
  (*a.mutable_labels())["host"] = a.host_id();
  *a.mutable_active_since() = TimeUtil::SecondsToTimestamp(1'700'000'000);
  return a;
}

v1::Alert Resolved(int host, int64_t at_s) {
  v1::Alert a = Firing(host);
  a.set_state(v1::ALERT_STATE_RESOLVED);
  *a.mutable_resolved_at() = TimeUtil::SecondsToTimestamp(at_s);
  return a;
}

std::vector<v1::Alert> FiringHosts(int n) {
  std::vector<v1::Alert> out;
  for (int i = 0; i < n; ++i) out.push_back(Firing(i));
  return out;
}

size_t AlertsIn(const std::string& body) {
  size_t n = 0;
  for (size_t p = body.find("\"startsAt\""); p != std::string::npos;
       p = body.find("\"startsAt\"", p + 1)) {
    ++n;
  }
  return n;
}

// Records posts; answers with `status` (and `retry_after`).
struct FakeAlertmanager {
  absl::Mutex mu;
  std::vector<std::pair<absl::Time, size_t>> posts;  // time, alerts
  std::vector<std::string> bodies;
  long status = 200;
  std::string retry_after;
  absl::Time* const clock;

  explicit FakeAlertmanager(absl::Time* c) : clock(c) {}

  AlertmanagerNotifier::Poster Poster() {
    return [this](const std::string&,
                  const std::string& body) -> absl::StatusOr<HttpResponse> {
      absl::MutexLock lock(&mu);
      posts.push_back({*clock, AlertsIn(body)});
      bodies.push_back(body);
      HttpResponse r;
      r.status = status;
      r.retry_after = retry_after;
      return r;
    };
  }
  std::vector<size_t> Sizes() {
    absl::MutexLock lock(&mu);
    std::vector<size_t> out;
    for (const auto& p : posts) out.push_back(p.second);
    return out;
  }
  void Clear() {
    absl::MutexLock lock(&mu);
    posts.clear();
    bodies.clear();
  }
};

AlertmanagerNotifier::Options Manual() {
  AlertmanagerNotifier::Options o;
  o.url = "http://alertmanager.invalid";
  o.background = false;
  o.resend_interval = absl::Seconds(100);
  return o;
}

TEST(BatchRangesTest, AlertCountBound) {
  using R = std::vector<std::pair<size_t, size_t>>;
  std::vector<size_t> sizes(5, 10);
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges(sizes, 2, 1000),
            (R{{0, 2}, {2, 4}, {4, 5}}));
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges(sizes, 5, 1000), (R{{0, 5}}));
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges(sizes, 4, 1000),
            (R{{0, 4}, {4, 5}}));
  EXPECT_TRUE(AlertmanagerNotifier::BatchRanges({}, 4, 1000).empty());
}

TEST(BatchRangesTest, BodyByteBound) {
  using R = std::vector<std::pair<size_t, size_t>>;
  // Three 10-byte objects: "[" + 10 + "," + 10 + "," + 10 + "]" = 34 bytes.
  std::vector<size_t> sizes(3, 10);
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges(sizes, 100, 34), (R{{0, 3}}));
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges(sizes, 100, 33),
            (R{{0, 2}, {2, 3}}));
  // Two: 23 bytes.
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges(sizes, 100, 23),
            (R{{0, 2}, {2, 3}}));
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges(sizes, 100, 22),
            (R{{0, 1}, {1, 2}, {2, 3}}));
  // An object larger than any body goes alone.
  EXPECT_EQ(AlertmanagerNotifier::BatchRanges({5, 50, 5}, 100, 20),
            (R{{0, 1}, {1, 2}, {2, 3}}));
}

TEST(AlertmanagerBatchingTest, PostsInBatchesOfAtMostMaxBatchAlerts) {
  absl::Time now = kT0;
  FakeAlertmanager am(&now);
  AlertmanagerNotifier::Options o = Manual();
  o.max_batch_alerts = 1000;
  o.max_concurrent_posts = 1;
  AlertmanagerNotifier n(
      o, [&] { return now; }, am.Poster());
  n.Update(FiringHosts(2500));
  n.Round();
  EXPECT_EQ(am.Sizes(), (std::vector<size_t>{1000, 1000, 500}));
  EXPECT_EQ(n.stats().posts_ok, 3u);
  EXPECT_EQ(n.stats().alerts_sent, 2500u);
  // The bodies are valid JSON lists, each under the default 1 MiB.
  for (const std::string& b : am.bodies) {
    EXPECT_EQ(b.front(), '[');
    EXPECT_EQ(b.back(), ']');
    EXPECT_LE(b.size(), size_t{1} << 20);
  }
  // Nothing due until the resend interval.
  am.Clear();
  now += absl::Seconds(1);
  n.Round();
  EXPECT_TRUE(am.Sizes().empty());
}

TEST(AlertmanagerBatchingTest, PostsByteBoundedBodies) {
  absl::Time now = kT0;
  FakeAlertmanager am(&now);
  AlertmanagerNotifier::Options o = Manual();
  const std::string one =
      AlertmanagerNotifier::ToJson({Firing(0)}, now, o.resend_interval, "");
  // Room for exactly two of these alerts ("h0".."h9" are the same size).
  o.max_batch_bytes = 2 * (one.size() - 2) + 3;
  AlertmanagerNotifier n(
      o, [&] { return now; }, am.Poster());
  n.Update(FiringHosts(5));
  n.Round();
  // Up to 4 posts run at once: the batches arrive in any order.
  std::vector<size_t> sizes = am.Sizes();
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 2, 2}));
  for (const std::string& b : am.bodies) EXPECT_LE(b.size(), o.max_batch_bytes);
}

TEST(AlertmanagerBatchingTest, AtMostMaxConcurrentPostsInFlight) {
  absl::Time now = kT0;
  absl::Mutex mu;
  int in_flight = 0, most = 0, posts = 0;
  AlertmanagerNotifier::Options o = Manual();
  o.max_batch_alerts = 1;
  o.max_concurrent_posts = 3;
  AlertmanagerNotifier n(
      o, [&] { return now; },
      [&](const std::string&,
          const std::string&) -> absl::StatusOr<HttpResponse> {
        absl::MutexLock lock(&mu);
        ++in_flight;
        ++posts;
        most = std::max(most, in_flight);
        // Hold until three are in flight (or the last ones are left).
        auto full = [&] { return in_flight >= 3 || posts >= 10; };
        mu.AwaitWithTimeout(absl::Condition(&full), absl::Seconds(5));
        --in_flight;
        return HttpResponse{200, "", ""};
      });
  n.Update(FiringHosts(10));
  n.Round();
  EXPECT_EQ(posts, 10);
  EXPECT_EQ(most, 3);
}

TEST(AlertmanagerBatchingTest, ResendsSpreadOverTheInterval) {
  absl::Time now = kT0;
  FakeAlertmanager am(&now);
  AlertmanagerNotifier::Options o = Manual();  // resend every 100 s
  AlertmanagerNotifier n(
      o, [&] { return now; }, am.Poster());
  n.Update(FiringHosts(100));
  n.Round();
  EXPECT_EQ(am.Sizes(), (std::vector<size_t>{100}));
  am.Clear();
  // Rounds every 10 s: none due before 100 s, then ceil(100 * 10 / 100) =
  // 10 a round, those sent longest ago first.
  std::vector<size_t> per_round;
  for (int s = 10; s <= 300; s += 10) {
    now = kT0 + absl::Seconds(s);
    am.Clear();
    n.Round();
    std::vector<size_t> sizes = am.Sizes();
    per_round.push_back(sizes.empty() ? 0 : sizes[0]);
  }
  std::vector<size_t> expected(30, 10);
  std::fill(expected.begin(), expected.begin() + 9, 0);  // 10 s .. 90 s
  EXPECT_EQ(per_round, expected);
  // Every alert was resent within 2 intervals of the last send: its endsAt
  // (4 intervals) never passed.
}

TEST(AlertmanagerBatchingTest, BoundOnTrackedAlerts) {
  absl::Time now = kT0;
  FakeAlertmanager am(&now);
  am.status = 503;  // nothing is delivered: everything waits
  AlertmanagerNotifier::Options o = Manual();
  o.max_alerts = 3;
  AlertmanagerNotifier n(
      o, [&] { return now; }, am.Poster());
  n.Update({Firing(1), Resolved(2, 1'700'000'100), Resolved(3, 1'700'000'050)});
  EXPECT_EQ(n.stats().alerts_dropped, 0u);  // exactly at the bound
  // A new alert evicts the resolved one resolved longest ago (h3).
  n.Update({Firing(4)});
  EXPECT_EQ(n.stats().alerts_dropped, 1u);
  // An update of a tracked alert never drops.
  n.Update({Firing(1)});
  EXPECT_EQ(n.stats().alerts_dropped, 1u);
  // h2 goes next; then with only firing alerts left the newcomer is dropped.
  n.Update({Firing(5)});
  n.Update({Firing(6)});
  EXPECT_EQ(n.stats().alerts_dropped, 3u);
  n.Round();
  ASSERT_EQ(am.bodies.size(), 1u);
  for (const char* host : {"\"h1\"", "\"h4\"", "\"h5\""})
    EXPECT_TRUE(absl::StrContains(am.bodies[0], host)) << host;
  for (const char* host : {"\"h2\"", "\"h3\"", "\"h6\""})
    EXPECT_FALSE(absl::StrContains(am.bodies[0], host)) << host;
  EXPECT_EQ(n.stats().alerts_waiting, 3u);
}

TEST(AlertmanagerBatchingTest, BacksOffOnRefusalAndHonoursRetryAfter) {
  absl::Time now = kT0;
  FakeAlertmanager am(&now);
  am.status = 503;
  AlertmanagerNotifier::Options o = Manual();
  AlertmanagerNotifier n(
      o, [&] { return now; }, am.Poster());
  n.Update(FiringHosts(3));
  // A round every second for 70 s: posts at 0, 1, 3, 7, 15, 31, 63 s.
  std::vector<int64_t> at;
  for (int s = 0; s <= 70; ++s) {
    now = kT0 + absl::Seconds(s);
    n.Round();
  }
  for (const auto& p : am.posts)
    at.push_back(absl::ToInt64Seconds(p.first - kT0));
  EXPECT_EQ(at, (std::vector<int64_t>{0, 1, 3, 7, 15, 31, 63}));
  EXPECT_EQ(n.stats().posts_failed, 7u);
  // 429 with Retry-After: 30 at 123 s (the 60 s cap first): next at 153 s.
  am.status = 429;
  am.retry_after = "30";
  am.Clear();
  for (int s = 71; s <= 160; ++s) {
    now = kT0 + absl::Seconds(s);
    n.Round();
  }
  at.clear();
  for (const auto& p : am.posts)
    at.push_back(absl::ToInt64Seconds(p.first - kT0));
  EXPECT_EQ(at, (std::vector<int64_t>{123, 153}));
  // Accepted: delivered, and the backoff starts over.
  am.status = 200;
  am.retry_after.clear();
  now = kT0 + absl::Seconds(183);
  n.Round();
  EXPECT_EQ(n.stats().alerts_sent, 3u);
  am.Clear();
  am.status = 500;
  n.Update({Firing(7)});
  for (int s = 184; s <= 186; ++s) {
    now = kT0 + absl::Seconds(s);
    n.Round();
  }
  at.clear();
  for (const auto& p : am.posts)
    at.push_back(absl::ToInt64Seconds(p.first - kT0));
  EXPECT_EQ(at, (std::vector<int64_t>{184, 185}));
}

TEST(AlertmanagerBatchingTest, AFailedBatchStopsTheRoundAndIsPostedAgain) {
  absl::Time now = kT0;
  int calls = 0;
  std::vector<size_t> sizes;
  AlertmanagerNotifier::Options o = Manual();
  o.max_batch_alerts = 1000;
  o.max_concurrent_posts = 1;
  AlertmanagerNotifier n(
      o, [&] { return now; },
      [&](const std::string&,
          const std::string& body) -> absl::StatusOr<HttpResponse> {
        sizes.push_back(AlertsIn(body));
        if (++calls == 2) return absl::UnavailableError("connection refused");
        return HttpResponse{200, "", ""};
      });
  n.Update(FiringHosts(2500));
  n.Round();
  // The first batch delivered, the second failed, the third not tried.
  EXPECT_EQ(sizes, (std::vector<size_t>{1000, 1000}));
  EXPECT_EQ(n.stats().alerts_sent, 1000u);
  EXPECT_EQ(n.stats().last_error, "connection refused");
  now += absl::Seconds(1);
  n.Round();
  EXPECT_EQ(sizes, (std::vector<size_t>{1000, 1000, 1000, 500}));
  EXPECT_EQ(n.stats().alerts_sent, 2500u);
}

}  // namespace
}  // namespace tracehealth
