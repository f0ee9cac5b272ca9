// Hash backend vs trie backend on the same traces: the bytes and 16 KiB
// pools each would use for the distinct records.
//
// Thread safety: pure function.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_TRIE_COMPARISON_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_TRIE_COMPARISON_H_

#include <cstdint>
#include <vector>

#include "common/models/stackdepot/trie/depot_trie.h"

namespace tracehealth {

struct TrieComparison {
  uint64_t records = 0;
  uint64_t hash_bytes = 0;
  uint64_t hash_pools = 0;
  uint64_t trie_bytes = 0;
  uint64_t trie_pools = 0;
  uint64_t insert_failures = 0;
  double ratio = 0;  // trie_bytes / hash_bytes
};

// Inserts `traces` into a DepotTrie and accounts each distinct record at
// its hash-backend size (persistent records are sized to their frames).
TrieComparison CompareTrieWithHash(
    const std::vector<std::vector<uint64_t>>& traces,
    const DepotTrieOptions& options = {});

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_TRIE_COMPARISON_H_
