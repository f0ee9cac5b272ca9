// Fuzzes the line test used for enabled_functions and
// available_filter_functions, and the set_ftrace_filter entry test.
#include <cstddef>
#include <cstdint>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "agent/parsers/tracefs.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  uint64_t n = 0;
  uint64_t entries = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    n += tracehealth::agent::IsFunctionLine(line);
    entries += tracehealth::agent::IsFtraceFilterEntry(line);
  }
  FUZZ_CHECK(n <= size);
  FUZZ_CHECK(entries <= n);
  return 0;
}
