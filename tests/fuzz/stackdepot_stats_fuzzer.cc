// Fuzzes the /sys/kernel/debug/stackdepot/stats parser.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/stackdepot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tracehealth::agent::ParseStackDepotStats(text);
  return 0;
}
