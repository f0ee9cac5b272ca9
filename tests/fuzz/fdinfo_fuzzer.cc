// Fuzzes the BPF link /proc/PID/fdinfo parser.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/fdinfo.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto link = tracehealth::agent::ParseBpfLinkFdinfo(text);
  if (link.ok() && link->has_value()) {
    FUZZ_CHECK(!(*link)->link_type.empty());
    (void)tracehealth::agent::IsKprobeMultiLink(**link);
  }
  return 0;
}
