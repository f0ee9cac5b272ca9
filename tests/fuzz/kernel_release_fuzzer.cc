// Fuzzes the kernel release parser; a parsed release must print back to a
// string that parses to the same release.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/kernel/release.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = tracehealth::ParseKernelRelease(text);
  if (!r.ok()) return 0;
  FUZZ_CHECK(r->major >= 2 && r->major <= 99);
  FUZZ_CHECK(r->minor >= 0 && r->minor <= 9999);
  FUZZ_CHECK(r->patch >= 0 && r->patch <= 9999);
  auto again = tracehealth::ParseKernelRelease(r->ToString());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->major == r->major && again->minor == r->minor &&
             again->patch == r->patch && again->has_patch == r->has_patch &&
             again->suffix == r->suffix);
  return 0;
}
