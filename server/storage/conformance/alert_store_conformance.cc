#include "server/storage/conformance/alert_store_conformance.h"

#include <string>
#include <utility>
#include <vector>

namespace tracehealth::server {

void PrintTo(const AlertStoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string AlertStoreBackendName(
    const ::testing::TestParamInfo<AlertStoreBackend>& info) {
  return info.param.name;
}

void AlertStoreConformance::SetUp() {
  absl::StatusOr<std::unique_ptr<AlertStore>> store = GetParam().open();
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_NE(*store, nullptr);
  store_ = *std::move(store);
}

namespace {

// tracehealth.v1.AlertState values.
constexpr int kPending = 1;
constexpr int kFiring = 2;
constexpr int kResolved = 3;

AlertRow Alert(const std::string& rule, const std::string& host, int state,
               int64_t active_since_ns) {
  AlertRow a;
  a.rule = rule;
  a.host_id = host;
  a.state = state;
  a.severity = "warning";
  a.active_since_ns = active_since_ns;
  return a;
}

// "rule/host@active_since" of each row, in order.
std::vector<std::string> Keys(const std::vector<AlertRow>& rows) {
  std::vector<std::string> out;
  for (const AlertRow& r : rows) {
    out.push_back(r.rule + "/" + r.host_id + "@" +
                  std::to_string(r.active_since_ns));
  }
  return out;
}

std::vector<std::string> List(AlertStore& store, const AlertFilter& f) {
  absl::StatusOr<std::vector<AlertRow>> rows = store.ListAlerts(f);
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? Keys(*rows) : std::vector<std::string>{};
}

TEST_P(AlertStoreConformance, RoundTripsEveryField) {
  AlertRow firing = Alert("AttachStall", "a", kFiring, 1000);
  firing.severity = "critical";
  firing.labels = {{"role", "db"}, {"zone", "b"}};
  firing.annotations = {{"summary", "stall"}};
  firing.value = 31.5;
  firing.fired_at_ns = 2000;
  ASSERT_TRUE(store().PutAlert(firing).ok());
  absl::StatusOr<std::vector<AlertRow>> rows = store().ListAlerts({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const AlertRow& got = (*rows)[0];
  EXPECT_EQ(got.rule, "AttachStall");
  EXPECT_EQ(got.host_id, "a");
  EXPECT_EQ(got.state, kFiring);
  EXPECT_EQ(got.severity, "critical");
  EXPECT_EQ(got.labels, firing.labels);
  EXPECT_EQ(got.annotations, firing.annotations);
  EXPECT_EQ(got.value, 31.5);
  EXPECT_EQ(got.active_since_ns, 1000);
  ASSERT_TRUE(got.fired_at_ns.has_value());
  EXPECT_EQ(*got.fired_at_ns, 2000);
  EXPECT_FALSE(got.resolved_at_ns.has_value());
}

TEST_P(AlertStoreConformance, AnEmptyStoreListsNothing) {
  EXPECT_TRUE(List(store(), {}).empty());
}

TEST_P(AlertStoreConformance, ListsPendingAndFiringUnlessAskedOtherwise) {
  ASSERT_TRUE(store().PutAlert(Alert("P", "h", kPending, 100)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("F", "h", kFiring, 200)).ok());
  AlertRow resolved = Alert("R", "h", kResolved, 300);
  resolved.fired_at_ns = 350;
  resolved.resolved_at_ns = 400;
  ASSERT_TRUE(store().PutAlert(resolved).ok());
  EXPECT_EQ(List(store(), {}),
            (std::vector<std::string>{"F/h@200", "P/h@100"}));
  AlertFilter f;
  f.states = {kResolved};
  absl::StatusOr<std::vector<AlertRow>> rows = store().ListAlerts(f);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].rule, "R");
  EXPECT_EQ(*(*rows)[0].resolved_at_ns, 400);
  f.states = {kPending, kResolved};
  EXPECT_EQ(List(store(), f), (std::vector<std::string>{"R/h@300", "P/h@100"}));
}

TEST_P(AlertStoreConformance, FiltersByHost) {
  ASSERT_TRUE(store().PutAlert(Alert("X", "a", kFiring, 100)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("X", "b", kFiring, 100)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("Y", "b", kResolved, 200)).ok());
  AlertFilter f;
  f.host_id = "b";
  EXPECT_EQ(List(store(), f), (std::vector<std::string>{"X/b@100"}));
  f.states = {kResolved};
  EXPECT_EQ(List(store(), f), (std::vector<std::string>{"Y/b@200"}));
  f.host_id = "a";
  EXPECT_TRUE(List(store(), f).empty());
  f.host_id = "c";
  f.states = {};
  EXPECT_TRUE(List(store(), f).empty());
}

TEST_P(AlertStoreConformance, RuleHostAndActiveSinceKeyAnAlert) {
  // The same episode moves from pending to firing: one row.
  ASSERT_TRUE(store().PutAlert(Alert("X", "h", kPending, 1000)).ok());
  AlertRow fired = Alert("X", "h", kFiring, 1000);
  fired.fired_at_ns = 1500;
  fired.value = 7;
  ASSERT_TRUE(store().PutAlert(fired).ok());
  absl::StatusOr<std::vector<AlertRow>> rows = store().ListAlerts({});
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].state, kFiring);
  EXPECT_EQ(*(*rows)[0].fired_at_ns, 1500);
  EXPECT_EQ((*rows)[0].value, 7);
  // A later episode of the same rule and host is another alert, as is the
  // same rule on another host.
  ASSERT_TRUE(store().PutAlert(Alert("X", "h", kPending, 5000)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("X", "g", kPending, 1000)).ok());
  EXPECT_EQ(List(store(), {}),
            (std::vector<std::string>{"X/h@5000", "X/g@1000", "X/h@1000"}));
}

TEST_P(AlertStoreConformance, NewestFirstTiesByRuleThenHostUpToTheLimit) {
  ASSERT_TRUE(store().PutAlert(Alert("B", "y", kFiring, 300)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("A", "z", kFiring, 100)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("B", "x", kFiring, 300)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("A", "y", kFiring, 300)).ok());
  ASSERT_TRUE(store().PutAlert(Alert("C", "x", kFiring, 200)).ok());
  EXPECT_EQ(List(store(), {}),
            (std::vector<std::string>{"A/y@300", "B/x@300", "B/y@300",
                                      "C/x@200", "A/z@100"}));
  AlertFilter f;
  f.limit = 2;
  EXPECT_EQ(List(store(), f), (std::vector<std::string>{"A/y@300", "B/x@300"}));
  f.limit = 1;
  EXPECT_EQ(List(store(), f), (std::vector<std::string>{"A/y@300"}));
}

TEST_P(AlertStoreConformance, LimitZeroMeansAThousand) {
  for (int i = 0; i < 1001; ++i) {
    ASSERT_TRUE(
        store().PutAlert(Alert("X", "h" + std::to_string(i), kFiring, i)).ok());
  }
  AlertFilter f;
  f.limit = 0;
  std::vector<std::string> rows = List(store(), f);
  ASSERT_EQ(rows.size(), 1000u);
  // Newest first: h1000 (active since 1000) down to h1; h0 is left out.
  EXPECT_EQ(rows.front(), "X/h1000@1000");
  EXPECT_EQ(rows.back(), "X/h1@1");
  f.limit = 1001;
  EXPECT_EQ(List(store(), f).size(), 1001u);
}

}  // namespace
}  // namespace tracehealth::server
