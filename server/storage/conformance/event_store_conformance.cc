#include "server/storage/conformance/event_store_conformance.h"

#include <string>
#include <utility>
#include <vector>

namespace tracehealth::server {

void PrintTo(const EventStoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string EventStoreBackendName(
    const ::testing::TestParamInfo<EventStoreBackend>& info) {
  return info.param.name;
}

void EventStoreConformance::SetUp() {
  absl::StatusOr<std::unique_ptr<EventStore>> store = GetParam().open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_NE(*store, nullptr);
  store_ = *std::move(store);
}

namespace {

// tracehealth.v1.EventPrediction values.
constexpr int kYes = 1;
constexpr int kNo = 2;
constexpr int kUnknown = 3;

EventRow Event(const std::string& host, const std::string& boot, uint64_t seq,
               int64_t logged_at_ns, int predicted) {
  EventRow e;
  e.host_id = host;
  e.boot_id = boot;
  e.kmsg_seq = seq;
  e.logged_at_ns = logged_at_ns;
  e.kind = 1;
  e.model = 1;
  e.predicted = predicted;
  e.received_at_ns = logged_at_ns + 5;
  e.blob = "blob " + host + "/" + boot + "/" + std::to_string(seq);
  return e;
}

// "host/boot/seq" of each row, in order.
std::vector<std::string> Keys(const std::vector<EventRow>& rows) {
  std::vector<std::string> out;
  for (const EventRow& r : rows) {
    out.push_back(r.host_id + "/" + r.boot_id + "/" +
                  std::to_string(r.kmsg_seq));
  }
  return out;
}

std::vector<std::string> List(EventStore& store, EventFilter f) {
  absl::StatusOr<std::vector<EventRow>> rows = store.ListEvents(f);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? Keys(*rows) : std::vector<std::string>{};
}

EventFilter All() {
  EventFilter f;
  f.from_ns = 0;
  f.to_ns = 1'000'000;
  return f;
}

TEST_P(EventStoreConformance, RoundTripsEveryField) {
  EventRow e = Event("a", "boot-1", 812, 1000, kNo);
  e.kind = 3;
  e.model = 2;
  e.received_at_ns = 4000;
  e.blob = std::string("\x00\x01\xff serialized", 14);
  absl::StatusOr<std::vector<bool>> put = store().PutEvents({e});
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(*put, std::vector<bool>{true});
  absl::StatusOr<std::vector<EventRow>> rows = store().ListEvents(All());
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const EventRow& got = (*rows)[0];
  EXPECT_EQ(got.host_id, "a");
  EXPECT_EQ(got.boot_id, "boot-1");
  EXPECT_EQ(got.kmsg_seq, 812u);
  EXPECT_EQ(got.logged_at_ns, 1000);
  EXPECT_EQ(got.kind, 3);
  EXPECT_EQ(got.model, 2);
  EXPECT_EQ(got.predicted, kNo);
  EXPECT_EQ(got.received_at_ns, 4000);
  EXPECT_EQ(got.blob, e.blob);
}

TEST_P(EventStoreConformance, StoresAnEventOnce) {
  // The same (host, boot, seq) again, in a later call and twice in one
  // call: stored once, the first row's contents kept.
  EventRow first = Event("a", "b1", 7, 100, kYes);
  ASSERT_TRUE(store().PutEvents({first}).ok());
  EventRow again = Event("a", "b1", 7, 100, kNo);
  EventRow other_boot = Event("a", "b2", 7, 200, kNo);
  EventRow other_host = Event("c", "b1", 7, 300, kNo);
  absl::StatusOr<std::vector<bool>> put =
      store().PutEvents({again, other_boot, other_boot, other_host});
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(*put, (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(List(store(), All()),
            (std::vector<std::string>{"c/b1/7", "a/b2/7", "a/b1/7"}));
  EventFilter yes = All();
  yes.predicted = kYes;
  EXPECT_EQ(List(store(), yes), std::vector<std::string>{"a/b1/7"});
}

TEST_P(EventStoreConformance, OrdersNewestFirstWithTies) {
  // Three at 500 tie: by host, then boot, then seq, ascending.
  ASSERT_TRUE(
      store()
          .PutEvents(
              {Event("b", "x", 1, 500, kNo), Event("a", "y", 2, 500, kNo),
               Event("a", "y", 1, 500, kNo), Event("a", "x", 9, 500, kNo),
               Event("a", "x", 3, 900, kNo), Event("a", "x", 4, 100, kNo)})
          .ok());
  EXPECT_EQ(List(store(), All()),
            (std::vector<std::string>{"a/x/3", "a/x/9", "a/y/1", "a/y/2",
                                      "b/x/1", "a/x/4"}));
}

TEST_P(EventStoreConformance, FiltersByHostWindowPredictionAndLimit) {
  ASSERT_TRUE(
      store()
          .PutEvents(
              {Event("a", "b", 1, 99, kNo), Event("a", "b", 2, 100, kYes),
               Event("a", "b", 3, 150, kNo), Event("a", "b", 4, 199, kUnknown),
               Event("a", "b", 5, 200, kNo), Event("c", "b", 1, 150, kNo)})
          .ok());
  EventFilter f;
  f.from_ns = 100;  // inclusive
  f.to_ns = 200;    // exclusive
  EXPECT_EQ(List(store(), f),
            (std::vector<std::string>{"a/b/4", "a/b/3", "c/b/1", "a/b/2"}));
  f.host_id = "a";
  EXPECT_EQ(List(store(), f),
            (std::vector<std::string>{"a/b/4", "a/b/3", "a/b/2"}));
  f.predicted = kNo;
  EXPECT_EQ(List(store(), f), std::vector<std::string>{"a/b/3"});
  f.predicted = 0;
  f.limit = 2;
  EXPECT_EQ(List(store(), f), (std::vector<std::string>{"a/b/4", "a/b/3"}));
  f.host_id = "nobody";
  EXPECT_TRUE(List(store(), f).empty());
}

TEST_P(EventStoreConformance, DefaultLimitIsOneHundred) {
  std::vector<EventRow> rows;
  for (uint64_t i = 1; i <= 101; ++i) {
    rows.push_back(Event("a", "b", i, static_cast<int64_t>(i), kNo));
  }
  ASSERT_TRUE(store().PutEvents(rows).ok());
  EventFilter f = All();
  f.limit = 0;
  std::vector<std::string> got = List(store(), f);
  ASSERT_EQ(got.size(), 100u);
  // Newest first: seq 101 (logged at 101) down to seq 2; seq 1 is left out.
  EXPECT_EQ(got.front(), "a/b/101");
  EXPECT_EQ(got.back(), "a/b/2");
}

TEST_P(EventStoreConformance, AnEmptyCallStoresNothing) {
  absl::StatusOr<std::vector<bool>> put = store().PutEvents({});
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_TRUE(put->empty());
  EXPECT_TRUE(List(store(), All()).empty());
}

}  // namespace
}  // namespace tracehealth::server
