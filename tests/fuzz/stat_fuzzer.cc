// Fuzzes the /proc/stat (processes, btime) and /proc/uptime parsers.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/procfs/proc.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tracehealth::ParseStatProcesses(text);
  (void)tracehealth::ParseStatBtime(text);
  auto up = tracehealth::ParseUptime(text);
  if (up.ok()) FUZZ_CHECK(std::isfinite(*up) && *up >= 0);
  return 0;
}
