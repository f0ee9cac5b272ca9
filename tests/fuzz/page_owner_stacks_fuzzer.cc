// Fuzzes the page_owner show_stacks parser and the stack depot trie
// measurement built on it.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/models/stackdepot/page_owner_stacks.h"
#include "common/models/stackdepot/stack_depot.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto stacks = tracehealth::ParsePageOwnerStacks(text);
  if (stacks.ok()) {
    tracehealth::FrameAddressMap map;
    for (const auto& s : *stacks) {
      FUZZ_CHECK(!s.frames.empty());
      FUZZ_CHECK(map.Addresses(s.frames).size() == s.frames.size());
    }
  }
  (void)tracehealth::MeasureShowStacks(text);
  return 0;
}
