// Debian's prometheus-alertmanager on loopback for tests and benchmarks:
// its own data directory, no cluster, one receiver without integrations
// (group_by alertname, group_wait 1s).
#ifndef TRACEHEALTH_TESTS_UTIL_ALERTMANAGER_PROCESS_H_
#define TRACEHEALTH_TESTS_UTIL_ALERTMANAGER_PROCESS_H_

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

// Starts Alertmanager on 127.0.0.1:`port` with storage in `dir` (created;
// log in dir/alertmanager.log) and waits until /-/ready answers 200.
// Starting again with the same dir and port is a restart. Errors: the start
// failure or DeadlineExceeded with the log's tail.
absl::StatusOr<std::unique_ptr<Subprocess>> StartAlertmanager(
    const std::string& dir, int port,
    absl::Duration ready_timeout = absl::Seconds(60));

// The active alerts Alertmanager lists (GET /api/v2/alerts?active=true over
// HTTP/1.0, any size): how many times each (alertname, host) appears.
// Errors: connection or a body that is not a JSON list.
absl::StatusOr<std::map<std::pair<std::string, std::string>, int>> ActiveAlerts(
    int port);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_ALERTMANAGER_PROCESS_H_
