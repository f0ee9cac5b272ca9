// Fuzzes the upstream-version parsers (/proc/version, /proc/version_signature).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/kernel_version.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto debian = tracehealth::agent::DebianUpstreamVersion(text);
  if (debian.has_value()) {
    FUZZ_CHECK(!debian->version.empty() && debian->version.size() <= size);
  }
  auto ubuntu = tracehealth::agent::ParseVersionSignature(text);
  if (ubuntu.ok()) FUZZ_CHECK(!ubuntu->version.empty());
  return 0;
}
