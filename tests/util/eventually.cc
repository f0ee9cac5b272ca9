#include "tests/util/eventually.h"

#include "absl/time/clock.h"

namespace tracehealth::testing {

bool Eventually(const std::function<bool()>& cond, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (cond()) return true;
    absl::SleepFor(absl::Milliseconds(250));
  }
  return cond();
}

}  // namespace tracehealth::testing
