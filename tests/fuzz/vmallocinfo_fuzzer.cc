// Fuzzes the /proc/vmallocinfo counter.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/vmallocinfo.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr uint64_t kShadowPage = 8 * 4096;
  auto whole = tracehealth::agent::ParseVmallocInfo(text, kShadowPage);
  if (whole.ok()) {
    FUZZ_CHECK(whole->unpurged_areas <= whole->areas);
    FUZZ_CHECK(whole->unpurged_shadow_page_areas <= whole->unpurged_areas);
  }
  return 0;
}
