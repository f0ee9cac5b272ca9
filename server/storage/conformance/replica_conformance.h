// The contracts of what replicas need of a backend (ChangeFeed,
// AlertTransitions, LeaseStore), as tests (tests only).
//
// A backend's test instantiates the suite with a way to make a fresh
// database and open stores on it:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Postgres, ReplicaConformance,
//       ::testing::Values(ReplicaBackend{"postgres", NewPostgresDatabase}),
//       ReplicaBackendName);
//
// and links //server/storage/conformance:replica_conformance. Tests that
// need a second store on the same database (another replica) are skipped
// for a backend with a single writer (SQLite).
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_REPLICA_CONFORMANCE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_REPLICA_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/storage/alert_store.h"
#include "server/storage/alert_transitions.h"
#include "server/storage/change_feed.h"
#include "server/storage/lease_store.h"
#include "server/storage/report_store.h"

namespace tracehealth::server {

// One store's interfaces; `owner` keeps the store alive.
struct ReplicaStore {
  std::shared_ptr<void> owner;
  ReportStore* reports = nullptr;
  AlertStore* alerts = nullptr;
  ChangeFeed* feed = nullptr;
  AlertTransitions* transitions = nullptr;
  LeaseStore* leases = nullptr;
};

// A store type implementing all five interfaces as one ReplicaStore.
template <typename T>
ReplicaStore AsReplicaStore(std::shared_ptr<T> store) {
  ReplicaStore r;
  r.reports = store.get();
  r.alerts = store.get();
  r.feed = store.get();
  r.transitions = store.get();
  r.leases = store.get();
  r.owner = std::move(store);
  return r;
}

// A fresh database of one test.
struct ReplicaDatabase {
  // Opens a store on the database: the first call the first store, later
  // calls other replicas' stores.
  std::function<absl::StatusOr<ReplicaStore>()> open;
  // Whether more than one store may be open on it at once.
  bool shared = false;
};

struct ReplicaBackend {
  std::string name;  // the test name suffix: letters, digits and '_'
  std::function<absl::StatusOr<ReplicaDatabase>()> new_database;
};

void PrintTo(const ReplicaBackend& backend, std::ostream* os);
std::string ReplicaBackendName(
    const ::testing::TestParamInfo<ReplicaBackend>& info);

class ReplicaConformance : public ::testing::TestWithParam<ReplicaBackend> {
 protected:
  void SetUp() override;
  // Another store on the database (tests that call it skip first when
  // !db_.shared).
  ReplicaStore Peer();

  ReplicaDatabase db_;
  ReplicaStore a_;
  std::vector<ReplicaStore> peers_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_REPLICA_CONFORMANCE_H_
