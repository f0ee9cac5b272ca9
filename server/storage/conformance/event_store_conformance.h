// The contract every EventStore backend keeps, as tests (tests only).
//
// A backend's test instantiates the suite with a way to open fresh stores:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, EventStoreConformance,
//       ::testing::Values(EventStoreBackend{"sqlite", OpenSqliteEvents}),
//       EventStoreBackendName);
//
// and links //server/storage/conformance:event_store_conformance.
#ifndef TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_EVENT_STORE_CONFORMANCE_H_
#define TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_EVENT_STORE_CONFORMANCE_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/storage/event_store.h"

namespace tracehealth::server {

struct EventStoreBackend {
  std::string name;  // the test name suffix: letters, digits and '_'
  // A different new, empty store on each call.
  std::function<absl::StatusOr<std::unique_ptr<EventStore>>()> open;
};

void PrintTo(const EventStoreBackend& backend, std::ostream* os);
std::string EventStoreBackendName(
    const ::testing::TestParamInfo<EventStoreBackend>& info);

class EventStoreConformance
    : public ::testing::TestWithParam<EventStoreBackend> {
 protected:
  void SetUp() override;

  EventStore& store() { return *store_; }

  std::unique_ptr<EventStore> store_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_CONFORMANCE_EVENT_STORE_CONFORMANCE_H_
