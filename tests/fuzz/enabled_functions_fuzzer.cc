// Fuzzes the line counter used for enabled_functions and
// available_filter_functions.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/tracefs.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const uint64_t n = tracehealth::agent::CountNonEmptyLines(text);
  FUZZ_CHECK(n <= size);
  return 0;
}
