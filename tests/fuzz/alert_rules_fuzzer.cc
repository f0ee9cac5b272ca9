// Fuzzes the alert rules YAML parser (deploy/alerts/rules.yaml format).
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "server/alerts/rules.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto rules = tracehealth::ParseAlertRules(text);
  if (rules.ok()) {
    for (const auto& rule : *rules) {
      FUZZ_CHECK(!rule.name.empty());
      FUZZ_CHECK(rule.for_duration >= absl::ZeroDuration());
    }
  }
  return 0;
}
