#include "server/storage/conformance/replica_conformance.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "server/storage/conformance/test_rows.h"

namespace tracehealth::server {

void PrintTo(const ReplicaBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string ReplicaBackendName(
    const ::testing::TestParamInfo<ReplicaBackend>& info) {
  return info.param.name;
}

void ReplicaConformance::SetUp() {
  absl::StatusOr<ReplicaDatabase> db = GetParam().new_database();
  ASSERT_TRUE(db.ok()) << db.status();
  db_ = *std::move(db);
  absl::StatusOr<ReplicaStore> a = db_.open();
  ASSERT_TRUE(a.ok()) << a.status();
  a_ = *std::move(a);
}

ReplicaStore ReplicaConformance::Peer() {
  absl::StatusOr<ReplicaStore> p = db_.open();
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  peers_.push_back(*p);
  return *std::move(p);
}

namespace {

#define REQUIRE_SHARED_DATABASE()                                   \
  if (!db_.shared) {                                                \
    GTEST_SKIP() << "the backend has one writer: no other replica"; \
  }

constexpr int kPending = 1;
constexpr int kFiring = 2;
constexpr int kResolved = 3;

std::map<std::string, LatestRow> PollAll(ChangeFeed& feed) {
  std::map<std::string, LatestRow> out;
  absl::Status st =
      feed.Poll([&](LatestRow& r) { out[r.host_id] = std::move(r); });
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

void Write(ReportStore& store, std::vector<ReportRow> rows) {
  auto out = store.WriteBatch(rows);
  ASSERT_TRUE(out.ok()) << out.status();
}

AlertRow Alert(int state, int64_t active_since_ns,
               const std::string& host = "h") {
  AlertRow a;
  a.rule = "AttachStall";
  a.host_id = host;
  a.state = state;
  a.severity = "warning";
  a.active_since_ns = active_since_ns;
  return a;
}

// "state@active_since" of the current alert, "none" without one.
std::string Describe(const std::optional<AlertRow>& a) {
  if (!a.has_value()) return "none";
  return std::to_string(a->state) + "@" + std::to_string(a->active_since_ns);
}

std::string Transition(AlertTransitions& t,
                       std::optional<AlertEpisode> expected,
                       const AlertRow& next) {
  absl::StatusOr<TransitionResult> r = t.TransitionAlert(expected, next);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "error";
  return std::string(r->applied ? "applied " : "refused ") +
         Describe(r->current);
}

// --- ChangeFeed ---

TEST_P(ReplicaConformance, FeedDoesNotDeliverTheStoresOwnWrites) {
  Write(*a_.reports, {TestRow("h", 1, 100), TestRow("g", 1, 100)});
  EXPECT_TRUE(PollAll(*a_.feed).empty());
  Write(*a_.reports, {TestRow("h", 2, 200)});
  EXPECT_TRUE(PollAll(*a_.feed).empty());
}

TEST_P(ReplicaConformance, FeedDeliversAnotherStoresWritesWithTheirState) {
  REQUIRE_SHARED_DATABASE();
  ReplicaStore b = Peer();
  EXPECT_TRUE(PollAll(*b.feed).empty());
  // Received at 101 and 201 (observed + 1).
  Write(*a_.reports, {TestRow("h", 1, 100), TestRow("g", 1, 150)});
  Write(*a_.reports, {TestRow("h", 2, 200)});
  std::map<std::string, LatestRow> got = PollAll(*b.feed);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got["h"].latest_seq, 2u);
  EXPECT_EQ(got["h"].blob, "blob2");
  EXPECT_EQ(got["h"].reports, 2u);
  EXPECT_EQ(got["h"].first_seen_ns, 101);
  EXPECT_EQ(got["h"].last_seen_ns, 201);
  EXPECT_EQ(got["g"].latest_seq, 1u);
  EXPECT_EQ(got["g"].last_seen_ns, 151);
  // Nothing changed since: nothing delivered.
  EXPECT_TRUE(PollAll(*b.feed).empty());
  EXPECT_EQ(got["h"].record, "");  // stored without one
  // The other way round: B's write reaches A, not B; with its record and,
  // unlike LoadLatest, its report too.
  ReportRow h3 = TestRow("h", 3, 300);
  h3.record = "rec3";
  Write(*b.reports, {h3});
  EXPECT_TRUE(PollAll(*b.feed).empty());
  got = PollAll(*a_.feed);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got["h"].latest_seq, 3u);
  EXPECT_EQ(got["h"].record, "rec3");
  EXPECT_EQ(got["h"].blob, "blob3");
  EXPECT_EQ(got["h"].reports, 3u);
  EXPECT_EQ(got["h"].last_seen_ns, 301);
}

TEST_P(ReplicaConformance, FeedDeliversTheNewestAfterAnOlderReplayOfItsOwn) {
  REQUIRE_SHARED_DATABASE();
  ReplicaStore b = Peer();
  Write(*a_.reports, {TestRow("h", 5, 500)});
  Write(*b.reports, {TestRow("h", 7, 700)});
  // A stores h@6 last, but h@7 (B's) stays the newest: A must still hear
  // of it.
  Write(*a_.reports, {TestRow("h", 6, 600)});
  std::map<std::string, LatestRow> got = PollAll(*a_.feed);
  ASSERT_EQ(got.count("h"), 1u);
  EXPECT_EQ(got["h"].latest_seq, 7u);
  EXPECT_EQ(got["h"].blob, "blob7");
  EXPECT_EQ(got["h"].reports, 3u);
}

TEST_P(ReplicaConformance, FeedMissesNothingUnderConcurrentWriters) {
  REQUIRE_SHARED_DATABASE();
  ReplicaStore b = Peer();
  ReplicaStore c = Peer();
  // B and C store 200 batches each (hosts b0..b9 and c0..c9, one seq per
  // batch) while A polls; at the end A has seen every host's seq 200.
  std::atomic<bool> done{false};
  std::map<std::string, uint64_t> seen;
  std::thread poller([&] {
    while (!done.load()) {
      for (auto& [host, row] : PollAll(*a_.feed)) {
        seen[host] = std::max(seen[host], row.latest_seq);
      }
    }
  });
  auto writer = [](ReplicaStore s, const std::string& prefix) {
    for (uint64_t seq = 1; seq <= 200; ++seq) {
      std::vector<ReportRow> rows;
      for (int h = 0; h < 10; ++h) {
        rows.push_back(TestRow(prefix + std::to_string(h), seq,
                               static_cast<int64_t>(seq)));
      }
      ASSERT_TRUE(s.reports->WriteBatch(rows).ok());
    }
  };
  std::thread wb(writer, b, "b");
  std::thread wc(writer, c, "c");
  wb.join();
  wc.join();
  done.store(true);
  poller.join();
  for (auto& [host, row] : PollAll(*a_.feed)) {
    seen[host] = std::max(seen[host], row.latest_seq);
  }
  ASSERT_EQ(seen.size(), 20u);
  for (const auto& [host, seq] : seen) EXPECT_EQ(seq, 200u) << host;
}

// --- AlertTransitions ---

TEST_P(ReplicaConformance, TransitionStartsAnEpisodeOnlyWhenNoneIsCurrent) {
  AlertTransitions& t = *a_.transitions;
  EXPECT_EQ(Transition(t, std::nullopt, Alert(kPending, 100)), "applied 1@100");
  // Someone else's belief that there is none is now wrong.
  EXPECT_EQ(Transition(t, std::nullopt, Alert(kPending, 200)), "refused 1@100");
  EXPECT_EQ(Transition(t, AlertEpisode{200, kPending}, Alert(kFiring, 200)),
            "refused 1@100");
  // A live episode is never replaced by another, even by a caller that
  // knows it is current.
  EXPECT_EQ(Transition(t, AlertEpisode{100, kPending}, Alert(kPending, 300)),
            "refused 1@100");
  EXPECT_EQ(Transition(t, AlertEpisode{100, kPending}, Alert(kFiring, 300)),
            "refused 1@100");
  // The stored alert is the first one, not the refused ones.
  absl::StatusOr<std::vector<AlertRow>> rows = a_.alerts->ListAlerts({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].active_since_ns, 100);
}

TEST_P(ReplicaConformance, TransitionNeedsTheCurrentStateToo) {
  AlertTransitions& t = *a_.transitions;
  ASSERT_EQ(Transition(t, std::nullopt, Alert(kPending, 100)), "applied 1@100");
  AlertRow fired = Alert(kFiring, 100);
  fired.fired_at_ns = 150;
  EXPECT_EQ(Transition(t, AlertEpisode{100, kPending}, fired), "applied 2@100");
  // A second replica promoting the same pending alert loses.
  EXPECT_EQ(Transition(t, AlertEpisode{100, kPending}, fired), "refused 2@100");
  AlertRow resolved = Alert(kResolved, 100);
  resolved.fired_at_ns = 150;
  resolved.resolved_at_ns = 400;
  EXPECT_EQ(Transition(t, AlertEpisode{100, kFiring}, resolved),
            "applied 3@100");
  // A new episode starts from the resolved one, never an earlier one.
  EXPECT_EQ(Transition(t, AlertEpisode{100, kResolved}, Alert(kPending, 50)),
            "refused 3@100");
  EXPECT_EQ(Transition(t, AlertEpisode{100, kFiring}, Alert(kPending, 500)),
            "refused 3@100");
  EXPECT_EQ(Transition(t, AlertEpisode{100, kResolved}, Alert(kPending, 500)),
            "applied 1@500");
  AlertFilter f;
  f.states = {kResolved};
  absl::StatusOr<std::vector<AlertRow>> rows = a_.alerts->ListAlerts(f);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(*(*rows)[0].resolved_at_ns, 400);
}

TEST_P(ReplicaConformance, ClearingAPendingAlertMakesTheOneBeforeCurrent) {
  AlertTransitions& t = *a_.transitions;
  ASSERT_EQ(Transition(t, std::nullopt, Alert(kPending, 100)), "applied 1@100");
  EXPECT_EQ(Transition(t, AlertEpisode{100, kPending}, Alert(0, 100)),
            "applied none");
  absl::StatusOr<std::vector<AlertRow>> rows = a_.alerts->ListAlerts({});
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  // With a resolved episode before it, that one is current again.
  AlertRow resolved = Alert(kResolved, 200);
  resolved.resolved_at_ns = 300;
  ASSERT_EQ(Transition(t, std::nullopt, resolved), "applied 3@200");
  ASSERT_EQ(Transition(t, AlertEpisode{200, kResolved}, Alert(kPending, 400)),
            "applied 1@400");
  EXPECT_EQ(Transition(t, AlertEpisode{400, kPending}, Alert(0, 400)),
            "applied 3@200");
  // Another host's alert of the same rule is another key.
  EXPECT_EQ(Transition(t, std::nullopt, Alert(kPending, 400, "g")),
            "applied 1@400");
}

TEST_P(ReplicaConformance, ConcurrentTransitionsApplyOnce) {
  // Eight evaluators start the same (rule, host) episode at once, each at
  // its own time; exactly one wins and all agree on the current alert.
  std::vector<ReplicaStore> stores;
  for (int i = 0; i < 8; ++i) stores.push_back(db_.shared ? Peer() : a_);
  std::atomic<int> applied{0};
  std::vector<std::string> current(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<TransitionResult> r =
          stores[i].transitions->TransitionAlert(std::nullopt,
                                                 Alert(kPending, 1000 + i));
      ASSERT_TRUE(r.ok()) << r.status();
      if (r->applied) applied++;
      current[i] = Describe(r->current);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(applied.load(), 1);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(current[i], current[0]);
  absl::StatusOr<std::vector<AlertRow>> rows = a_.alerts->ListAlerts({});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 1u);
}

// --- LeaseStore ---

bool Acquire(LeaseStore& l, const std::string& holder, absl::Duration ttl) {
  absl::StatusOr<bool> r = l.AcquireLease("retention", holder, ttl);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() && *r;
}

TEST_P(ReplicaConformance, LeaseHasOneHolderUntilReleased) {
  LeaseStore& a = *a_.leases;
  LeaseStore& b = db_.shared ? *Peer().leases : a;
  EXPECT_TRUE(Acquire(a, "replica-a", absl::Minutes(1)));
  EXPECT_FALSE(Acquire(b, "replica-b", absl::Minutes(1)));
  EXPECT_TRUE(Acquire(a, "replica-a", absl::Minutes(1)));  // renewal
  // Only the holder releases it.
  ASSERT_TRUE(b.ReleaseLease("retention", "replica-b").ok());
  EXPECT_FALSE(Acquire(b, "replica-b", absl::Minutes(1)));
  ASSERT_TRUE(a.ReleaseLease("retention", "replica-a").ok());
  EXPECT_TRUE(Acquire(b, "replica-b", absl::Minutes(1)));
  EXPECT_FALSE(Acquire(a, "replica-a", absl::Minutes(1)));
  // Another lease is independent.
  absl::StatusOr<bool> other =
      a.AcquireLease("rollup", "replica-a", absl::Minutes(1));
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(*other);
}

TEST_P(ReplicaConformance, ExpiredLeaseGoesToTheNextHolder) {
  LeaseStore& a = *a_.leases;
  LeaseStore& b = db_.shared ? *Peer().leases : a;
  ASSERT_TRUE(Acquire(a, "replica-a", absl::Milliseconds(500)));
  EXPECT_FALSE(Acquire(b, "replica-b", absl::Minutes(1)));
  absl::SleepFor(absl::Milliseconds(800));
  EXPECT_TRUE(Acquire(b, "replica-b", absl::Minutes(1)));
  EXPECT_FALSE(Acquire(a, "replica-a", absl::Milliseconds(500)));
}

}  // namespace
}  // namespace tracehealth::server
