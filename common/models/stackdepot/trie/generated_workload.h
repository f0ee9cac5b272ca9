// The trie vs hash comparison on the seed 003 benchmark's workload
// (GenerateSeedWorkload: 32,768 distinct 32-frame stacks, 75% of frames
// shared within groups of 64), used when a host exposes no traces of its own.
//
// The figures are computed at build time by running the real DepotTrie on
// the generated workload (generated_workload_gen), so no process pays the
// ~40 ms and ~10 MB that computing them costs; generated_workload_test
// recomputes them and checks they match.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_GENERATED_WORKLOAD_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_GENERATED_WORKLOAD_H_

#include "common/models/stackdepot/trie/trie_comparison.h"

namespace tracehealth {

const TrieComparison& GeneratedWorkloadEstimate();

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_GENERATED_WORKLOAD_H_
