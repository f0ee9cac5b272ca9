// Eventually: polls a condition until it holds or a timeout passes (tests
// that wait for other processes).
//
// Thread safety: calls `cond` on the caller's thread only.
#ifndef TRACEHEALTH_TESTS_UTIL_EVENTUALLY_H_
#define TRACEHEALTH_TESTS_UTIL_EVENTUALLY_H_

#include <functional>

#include "absl/time/time.h"

namespace tracehealth::testing {

// Whether `cond` returned true within `timeout`, asking every 250 ms and
// once more at the end.
bool Eventually(const std::function<bool()>& cond, absl::Duration timeout);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_EVENTUALLY_H_
