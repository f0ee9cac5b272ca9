// Kernel configuration: the text of .config (as in /boot/config-RELEASE) and
// the gzip-compressed form in /proc/config.gz (CONFIG_IKCONFIG_PROC).
//
// Pure functions; errors are InvalidArgument (malformed text, bad gzip) or
// ResourceExhausted (decompressed size above the limit).
#ifndef TRACEHEALTH_AGENT_PARSERS_KCONFIG_H_
#define TRACEHEALTH_AGENT_PARSERS_KCONFIG_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

class KernelConfig {
 public:
  // Parses "CONFIG_X=value" and "# CONFIG_X is not set" lines; other
  // comments and blank lines are ignored. Errors: a non-comment line that is
  // not CONFIG_NAME=value, or no CONFIG_ line at all.
  static absl::StatusOr<KernelConfig> Parse(absl::string_view text);

  // True for "y" or "m"; false for "is not set"; nullopt when the option is
  // not in the file at all (the kernel did not know it).
  std::optional<bool> Enabled(absl::string_view name) const;
  // Integer value ("CONFIG_STACKDEPOT_MAX_FRAMES=64"); nullopt when absent
  // or not an integer.
  std::optional<int64_t> Int(absl::string_view name) const;
  size_t size() const { return values_.size(); }

 private:
  // name (with CONFIG_ prefix) -> raw value; "n" for "is not set".
  std::map<std::string, std::string, std::less<>> values_;
};

// The page size a config builds for: CONFIG_PAGE_SIZE_{4,16,64}KB (6.9+
// on every architecture), else the architecture's own choice
// (CONFIG_ARM64_{4K,16K,64K}_PAGES, CONFIG_PPC_{4K,16K,64K,256K}_PAGES),
// else the page shift, CONFIG_PAGE_SHIFT (6.9+) or CONFIG_ARM64_PAGE_SHIFT
// (arm64 before 6.9 too; 12, 14 or 16), when it is from 12 to 18, else 4096
// for CONFIG_X86 (x86 has no other); nullopt when the config does not say.
// (Kconfig derives the shift from the choice, so both agree in any config
// it wrote; the choice is read first.)
std::optional<uint32_t> PageSizeFromConfig(const KernelConfig& config);

// Decompresses gzip data (as /proc/config.gz) into text. Errors:
// InvalidArgument for corrupt or truncated data, ResourceExhausted when the
// output would exceed `max_output_bytes`.
absl::StatusOr<std::string> Gunzip(absl::string_view compressed,
                                   size_t max_output_bytes);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_KCONFIG_H_
