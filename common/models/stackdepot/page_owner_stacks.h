// Parser for /sys/kernel/debug/page_owner_stacks/show_stacks (6.9+).
//
// mm/page_owner.c stack_print() writes, per stack with enough pages, one
// line per frame formatted with %pS (" symbol+0xoff/0xsize", plus
// " [module]" for module text, or a bare hex address when no symbol is
// known), then "nr_base_pages: N" and an empty line. Addresses themselves
// are not printed, so for the trie every distinct frame string is given a
// synthetic kernel text address (0xffffffff80000000 + 16 * index, which is
// compressible like real x86-64 kernel text); a bare hex frame keeps its
// own address.
//
// Thread safety: ParsePageOwnerStacks is a pure function; a FrameAddressMap
// is not thread-safe.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_PAGE_OWNER_STACKS_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_PAGE_OWNER_STACKS_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth {

struct OwnerStack {
  std::vector<std::string> frames;  // as printed, without the leading space
  uint64_t nr_base_pages = 0;
};

// Parses the whole file. Errors (InvalidArgument naming the line number):
// a count line with no frames before it, a count that is not a number, a
// line that is neither a frame (leading space), a count, nor empty, and
// frames left without a count at the end (truncated read).
absl::StatusOr<std::vector<OwnerStack>> ParsePageOwnerStacks(
    absl::string_view text);

class FrameAddressMap {
 public:
  static constexpr uint64_t kSyntheticBase = 0xffffffff80000000ull;
  // The address standing for `frame` (stable for the map's lifetime).
  uint64_t AddressOf(absl::string_view frame);
  std::vector<uint64_t> Addresses(const std::vector<std::string>& frames);
  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<std::string, uint64_t> ids_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_PAGE_OWNER_STACKS_H_
