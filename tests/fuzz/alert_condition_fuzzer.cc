// Fuzzes the alert condition parser and evaluates a parsed condition over
// an empty report.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "server/alerts/condition.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto c = tracehealth::Condition::Parse(text);
  if (c.ok()) {
    tracehealth::v1::HostReport report;
    tracehealth::EvalInput input;
    input.report = &report;
    (void)c->Evaluate(input);
  }
  return 0;
}
