// Fuzzes kernel command-line parameter lookup (/proc/cmdline).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/proc.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tracehealth::agent::CmdlineParam(text, "preempt");
  auto pools = tracehealth::agent::ParseStackDepotMaxPools(text);
  if (pools.ok() && pools->has_value()) FUZZ_CHECK(**pools > 0);
  return 0;
}
