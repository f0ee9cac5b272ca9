// Memory accounting in stack depot pools: allocations are carved from
// fixed-size pools (16 KiB: DEPOT_POOL_ORDER 2 with 4 KiB pages) the way
// lib/stackdepot.c does it. An allocation never straddles two pools (the
// rest of a pool too small for it is wasted), sizes are rounded up to 16
// bytes, and freed blocks are kept on per-size free lists and reused by the
// next allocation of the same size (in the kernel after an RCU grace period;
// here immediately). An allocation of exactly one pool gets a pool of its
// own and leaves the current pool current. Only sizes are tracked, not
// addresses.
//
// Thread safety: none; callers serialize.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_POOL_ACCOUNTING_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_POOL_ACCOUNTING_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "absl/types/span.h"

namespace tracehealth {

inline constexpr uint64_t kDepotPoolBytes = 16384;
inline constexpr uint64_t kDepotDefaultMaxPools = 8192;

// ALIGN(x, 16).
inline constexpr uint64_t Align16(uint64_t x) {
  return (x + 15) & ~uint64_t{15};
}

// Bytes of one hash-backend stack record of `frames` frames:
// ALIGN(sizeof(struct stack_record) header 32 + 8 * frames, 16).
inline constexpr uint64_t HashRecordBytes(uint64_t frames) {
  return Align16(32 + 8 * frames);
}

class PoolAccounting {
 public:
  // `max_pools` 0: unlimited.
  explicit PoolAccounting(uint64_t pool_bytes = kDepotPoolBytes,
                          uint64_t max_pools = 0);

  // Pools that would be added by allocating `sizes` (in order) now, or -1
  // when one of them is larger than a pool.
  int64_t PoolsNeeded(absl::Span<const uint64_t> sizes) const;
  // Whether `sizes` fit within max_pools.
  bool Fits(absl::Span<const uint64_t> sizes) const;

  // Allocates `bytes` (rounded up to 16). Precondition: Fits({bytes}).
  void Allocate(uint64_t bytes);
  // Returns a block of `bytes` (as passed to Allocate) to its free list.
  void Free(uint64_t bytes);

  // Bytes in live allocations (after rounding).
  uint64_t live_bytes() const { return live_bytes_; }
  uint64_t pools() const { return pools_; }
  // pools * pool_bytes.
  uint64_t reserved_bytes() const { return pools_ * pool_bytes_; }
  uint64_t pool_bytes() const { return pool_bytes_; }
  uint64_t max_pools() const { return max_pools_; }

 private:
  uint64_t pool_bytes_;
  uint64_t max_pools_;
  uint64_t pools_ = 0;
  // Free bytes left at the end of the current pool.
  uint64_t pool_left_ = 0;
  uint64_t live_bytes_ = 0;
  // Free blocks by rounded size.
  std::unordered_map<uint64_t, uint64_t> free_blocks_;
};

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_POOL_ACCOUNTING_H_
