#include "common/models/stackdepot/trie/trie_comparison.h"

#include "common/models/stackdepot/trie/pool_accounting.h"

namespace tracehealth {

TrieComparison CompareTrieWithHash(
    const std::vector<std::vector<uint64_t>>& traces,
    const DepotTrieOptions& options) {
  DepotTrie trie(options);
  PoolAccounting hash(options.pool_bytes);
  TrieComparison out;
  for (const std::vector<uint64_t>& trace : traces) {
    const uint64_t before = trie.records();
    absl::StatusOr<DepotTrie::StackId> id = trie.Insert(trace);
    if (!id.ok()) {
      ++out.insert_failures;
      continue;
    }
    if (*id > before) hash.Allocate(HashRecordBytes(trace.size()));
  }
  const DepotTrieStats s = trie.stats();
  out.records = s.records;
  out.hash_bytes = hash.live_bytes();
  out.hash_pools = hash.pools();
  out.trie_bytes = s.live_bytes;
  out.trie_pools = s.pools;
  out.ratio = out.hash_bytes > 0 ? static_cast<double>(out.trie_bytes) /
                                       static_cast<double>(out.hash_bytes)
                                 : 0;
  return out;
}

}  // namespace tracehealth
