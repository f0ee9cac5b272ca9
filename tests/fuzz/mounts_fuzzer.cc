// Fuzzes the /proc/mounts parser (octal escapes, tracefs/debugfs choice).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/procfs/proc.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = tracehealth::ParseMounts(text);
  if (r.ok() && r->tracefs.has_value()) FUZZ_CHECK(!r->tracefs->empty());
  return 0;
}
