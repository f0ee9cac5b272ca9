// Counts /proc/vmallocinfo lines (mm/vmalloc.c vmalloc_info_show):
//
//   0x000000004bd15d8e-0x000000001aea3136   12288 acpi_os_map_iomem+0x1bc/0x1e0
//   phys=0x9f000 ioremap 0x00000000b628df3a-0x00000000d6a50f80   20480 unpurged
//   vm_area 0x...-0x...    8192 vm_map_ram
//
// Lazily freed areas waiting for a purge are the "unpurged vm_area" lines;
// the third field is the area size in bytes. Fed line by line so a large
// file never has to be held in memory.
//
// Thread safety: one counter per thread.
#ifndef TRACEHEALTH_AGENT_PARSERS_VMALLOCINFO_H_
#define TRACEHEALTH_AGENT_PARSERS_VMALLOCINFO_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

struct VmallocCounts {
  uint64_t areas = 0;
  uint64_t unpurged_areas = 0;
  uint64_t unpurged_bytes = 0;
  // Unpurged areas of at least `shadow_page_bytes` (areas that own a whole
  // KASAN shadow page: 8 * PAGE_SIZE with generic KASAN).
  uint64_t unpurged_shadow_page_areas = 0;
  // Lines that did not have the "0xSTART-0xEND SIZE" shape.
  uint64_t malformed_lines = 0;
};

class VmallocInfoCounter {
 public:
  explicit VmallocInfoCounter(uint64_t shadow_page_bytes)
      : shadow_page_bytes_(shadow_page_bytes) {}
  // One line, without the newline. Empty lines are ignored.
  void AddLine(absl::string_view line);
  // The counts so far. InvalidArgument when more than half of the lines (and
  // at least one) were malformed: that is not vmallocinfo.
  absl::StatusOr<VmallocCounts> Result() const;

 private:
  uint64_t shadow_page_bytes_;
  VmallocCounts counts_;
};

// The whole file at once. For the tests and the fuzzer (one call per
// input); the collector streams lines into a VmallocInfoCounter.
absl::StatusOr<VmallocCounts> ParseVmallocInfo(absl::string_view text,
                                               uint64_t shadow_page_bytes);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_VMALLOCINFO_H_
