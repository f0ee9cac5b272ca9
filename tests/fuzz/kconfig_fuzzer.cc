// Fuzzes the kernel .config parser, the preemption model derived from it,
// and the gzip decoder used for /proc/config.gz.
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "agent/parsers/kconfig.h"
#include "agent/parsers/preempt.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = tracehealth::agent::KernelConfig::Parse(text);
  if (config.ok()) {
    FUZZ_CHECK(config->size() > 0);
    (void)config->Enabled("CONFIG_PREEMPT_DYNAMIC");
    (void)config->Int("CONFIG_STACKDEPOT_MAX_FRAMES");
    (void)tracehealth::agent::ModeFromConfig(*config, "full");
    (void)tracehealth::agent::ModeFromConfig(*config, "");
  }
  auto plain = tracehealth::agent::Gunzip(text, 1 << 20);
  if (plain.ok()) FUZZ_CHECK(plain->size() <= (1u << 20));
  return 0;
}
