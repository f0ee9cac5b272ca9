// Fuzzes the single-integer sysctl / module parameter parser
// (watchdog_thresh, softlockup_panic, rcu_cpu_stall_timeout, ...).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/procfs/proc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tracehealth::ParseSingleInteger(text);
  return 0;
}
