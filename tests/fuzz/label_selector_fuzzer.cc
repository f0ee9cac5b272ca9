// Fuzzes the label selector parser and matches a parsed selector.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "server/index/label_selector.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto sel = tracehealth::server::LabelSelector::Parse(text);
  if (sel.ok()) {
    google::protobuf::Map<std::string, std::string> labels;
    labels["role"] = "db";
    labels["zone"] = "eu-1";
    (void)sel->Matches(labels);
  }
  return 0;
}
