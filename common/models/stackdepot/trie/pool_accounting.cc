#include "common/models/stackdepot/trie/pool_accounting.h"

#include "absl/container/inlined_vector.h"

namespace tracehealth {

PoolAccounting::PoolAccounting(uint64_t pool_bytes, uint64_t max_pools)
    : pool_bytes_(pool_bytes), max_pools_(max_pools) {}

int64_t PoolAccounting::PoolsNeeded(absl::Span<const uint64_t> sizes) const {
  int64_t added = 0;
  uint64_t left = pool_left_;
  // Free blocks already used by earlier sizes of this request.
  absl::InlinedVector<uint64_t, 8> taken;
  for (uint64_t raw : sizes) {
    const uint64_t size = Align16(raw);
    if (size > pool_bytes_) return -1;
    auto it = free_blocks_.find(size);
    if (it != free_blocks_.end()) {
      uint64_t used = 0;
      for (uint64_t t : taken) used += t == size;
      if (used < it->second) {
        taken.push_back(size);
        continue;
      }
    }
    if (size == pool_bytes_) {
      ++added;  // a whole pool of its own; the current pool stays current
      continue;
    }
    if (size > left) {
      ++added;
      left = pool_bytes_;
    }
    left -= size;
  }
  return added;
}

bool PoolAccounting::Fits(absl::Span<const uint64_t> sizes) const {
  const int64_t needed = PoolsNeeded(sizes);
  if (needed < 0) return false;
  return max_pools_ == 0 ||
         pools_ + static_cast<uint64_t>(needed) <= max_pools_;
}

void PoolAccounting::Allocate(uint64_t bytes) {
  const uint64_t size = Align16(bytes);
  live_bytes_ += size;
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end() && it->second > 0) {
    if (--it->second == 0) free_blocks_.erase(it);
    return;
  }
  if (size == pool_bytes_) {
    ++pools_;
    return;
  }
  if (size > pool_left_) {
    ++pools_;
    pool_left_ = pool_bytes_;
  }
  pool_left_ -= size;
}

void PoolAccounting::Free(uint64_t bytes) {
  const uint64_t size = Align16(bytes);
  live_bytes_ -= size;
  ++free_blocks_[size];
}

}  // namespace tracehealth
