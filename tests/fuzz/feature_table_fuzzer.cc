// Fuzzes the kernel feature table YAML parser and queries a parsed table.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/kernel/feature_table.h"
#include "common/kernel/release.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = tracehealth::FeatureTable::Parse(text);
  if (table.ok()) {
    auto release = tracehealth::ParseKernelRelease("6.18.2");
    FUZZ_CHECK(release.ok());
    (void)table->Query("fprobe_on_fgraph", *release);
  }
  return 0;
}
