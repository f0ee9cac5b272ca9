// Free loopback TCP ports for tests that start binaries which cannot bind
// port 0 and report it (Prometheus, Alertmanager).
#ifndef TRACEHEALTH_TESTS_UTIL_PORTS_H_
#define TRACEHEALTH_TESTS_UTIL_PORTS_H_

namespace tracehealth::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read
// it back, close). Returns -1 on failure.
int PickFreePort();

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_PORTS_H_
