// Fuzzes the tracefs dynamic_events, current_tracer and flag-file parsers.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/tracefs.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto events = tracehealth::agent::ParseDynamicEvents(text);
  if (events.ok()) {
    for (const auto& e : *events) FUZZ_CHECK(e.type != 0 && !e.name.empty());
  }
  auto tracer = tracehealth::agent::ParseCurrentTracer(text);
  if (tracer.ok()) {
    FUZZ_CHECK(!tracer->empty());
    (void)tracehealth::agent::TracerUsesFgraph(*tracer, true);
  }
  (void)tracehealth::agent::ParseFlagFile(text);
  return 0;
}
