// Fuzzes kernel command-line parameter lookup (/proc/cmdline).
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/models/stackdepot/depot_pools.h"
#include "common/procfs/proc.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tracehealth::CmdlineParam(text, "preempt");
  // stack_depot_max_pools= as the kernel applies it: 1024..limit or nothing.
  std::string refused;
  const auto pools = tracehealth::MaxPoolsFromCmdline(text, 8191, &refused);
  if (pools.has_value()) FUZZ_CHECK(*pools >= 1024 && *pools <= 8191);
  return 0;
}
