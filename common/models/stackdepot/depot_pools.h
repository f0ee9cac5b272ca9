// The stack depot's pool budget as lib/stackdepot.c sets it, by page size
// (docs/design.md §3.2):
//   DEPOT_POOL_ORDER 2           pools of 4 pages: 16 KiB with 4 KiB pages,
//                                64 KiB with 16 KiB, 256 KiB with 64 KiB
//   DEPOT_OFFSET_BITS            DEPOT_POOL_ORDER + PAGE_SHIFT - 4
//   DEPOT_POOL_INDEX_BITS        32 - DEPOT_OFFSET_BITS - 5
//   limit                        (1 << DEPOT_POOL_INDEX_BITS) - 1: 131,071,
//                                32,767, 8,191
//   default                      min(limit, 8192): 8,192, 8,192, 8,191
// and stack_depot_max_pools= as its early_param handler reads it:
// kstrtouint(str, 0, ...) (a "0x" prefix is hex, a leading 0 octal), a
// value below 1024 or above the limit refused ("using default"), and a
// refused or malformed occurrence leaving the value as it was, so the last
// valid occurrence counts.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_DEPOT_POOLS_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_DEPOT_POOLS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace tracehealth {

// The pool count below which stack_depot_max_pools= is refused.
inline constexpr uint64_t kDepotMinMaxPools = 1024;
// The default's cap (DEPOT_POOLS_CAP).
inline constexpr uint64_t kDepotPoolsCap = 8192;

// For a page size in bytes (0 or not a power of two: 4096).
uint64_t DepotPoolBytes(uint32_t page_size);
uint64_t DepotPoolLimit(uint32_t page_size);
uint64_t DepotDefaultMaxPools(uint32_t page_size);

// stack_depot_max_pools= on a kernel command line, as the kernel applies it
// with `limit` (DepotPoolLimit): the last occurrence it accepts; nullopt
// when none is accepted. `refused`, when given, gets the occurrences it
// refuses ("stack_depot_max_pools=512: below 1024").
std::optional<uint64_t> MaxPoolsFromCmdline(absl::string_view cmdline,
                                            uint64_t limit,
                                            std::string* refused = nullptr);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_DEPOT_POOLS_H_
