// Fuzzes the CPU list parser (/sys/devices/system/cpu/online) and the
// /proc/cpuinfo parser.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/cpu.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto n = tracehealth::agent::ParseCpuListCount(text);
  if (n.ok()) FUZZ_CHECK(*n >= 1 && *n <= 1048576);
  (void)tracehealth::agent::ParseCpuInfo(text);
  return 0;
}
