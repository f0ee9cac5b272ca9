// Fuzzes the /proc/loadavg parser.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/procfs/proc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tracehealth::ParseLoadavg(text);
  return 0;
}
