// Synthetic stack traces with the shape of seed 003's benchmark: 32,768
// distinct 32-frame stacks in groups of 64 that share 75% of their frames,
// inserted in shuffled order; every frame compressible (kernel text).
//
// The seed does not say how the shared frames are arranged inside a group.
// Two shapes are offered:
//  - kBranching (default): the first stack of a group is fresh; each later
//    one copies the first d frames of a uniformly chosen earlier stack of
//    its group and continues with fresh frames, d uniform in
//    [2*round(0.75*32) - 31, 31] = [17, 31], mean 24 = 75% of 32. Groups
//    therefore form small call trees, as allocation stacks do when callers
//    diverge at different depths.
//  - kFlat: every stack of a group shares one 24-frame prefix and has 8
//    fresh frames (the least branching reading of "75% shared").
// Groups share no frames with each other. Fresh frames are distinct
// addresses in the x86-64 kernel text (0xffffffff81000000 + ...), or above
// 4 GiB below the top (not compressible) when `compressible` is false.
//
// Deterministic for a given seed on every platform (own splitmix64 RNG and
// Fisher-Yates shuffle). Thread safety: pure function.
#ifndef TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_TRACE_GENERATOR_H_
#define TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_TRACE_GENERATOR_H_

#include <cstdint>
#include <vector>

namespace tracehealth {

enum class WorkloadShape { kBranching, kFlat };

struct WorkloadOptions {
  uint32_t stacks = 32768;
  uint32_t frames = 32;
  uint32_t group = 64;
  double shared_fraction = 0.75;
  WorkloadShape shape = WorkloadShape::kBranching;
  bool compressible = true;
  bool shuffle = true;
  uint64_t seed = 3;
};

// Splitmix64 step: advances `state` and returns the next value.
uint64_t SplitMix64(uint64_t& state);

// The traces, innermost frame first. Every trace is distinct.
std::vector<std::vector<uint64_t>> GenerateSeedWorkload(
    const WorkloadOptions& options = {});

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_STACKDEPOT_TRIE_TRACE_GENERATOR_H_
