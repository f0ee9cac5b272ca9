// Fuzzes the sched/preempt and version-string preemption parsers.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/preempt.h"
#include "common/enum_names.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto mode = tracehealth::agent::ParseSchedPreempt(text);
  if (mode.ok()) {
    FUZZ_CHECK(*mode != tracehealth::v1::PREEMPT_MODE_UNKNOWN);
    (void)tracehealth::PreemptModeName(*mode);
  }
  auto flags = tracehealth::agent::ParseVersionPreemptFlags(text);
  if (flags.ok()) (void)tracehealth::agent::ModeFromVersionFlags(*flags);
  return 0;
}
