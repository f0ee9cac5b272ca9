// Fuzzes the /proc/meminfo Vmalloc* parser.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/procfs/proc.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = tracehealth::ParseMeminfoVmalloc(text);
  if (r.ok()) {
    FUZZ_CHECK(r->total_bytes.has_value() || r->used_bytes.has_value() ||
               r->chunk_bytes.has_value());
  }
  return 0;
}
