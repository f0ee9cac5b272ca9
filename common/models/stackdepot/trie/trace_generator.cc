#include "common/models/stackdepot/trie/trace_generator.h"

#include <algorithm>
#include <cmath>

namespace tracehealth {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<std::vector<uint64_t>> GenerateSeedWorkload(
    const WorkloadOptions& options) {
  uint64_t rng = options.seed;
  const uint32_t frames = std::max<uint32_t>(options.frames, 1);
  const uint32_t group = std::max<uint32_t>(options.group, 1);
  const uint64_t base =
      options.compressible ? 0xffffffff81000000ull : 0xffffc90000000000ull;
  uint64_t fresh_counter = 0;
  // Distinct addresses, 64 bytes apart plus a random offset inside them.
  auto fresh = [&]() {
    const uint64_t addr = base + fresh_counter * 64 + (SplitMix64(rng) & 0x3f);
    ++fresh_counter;
    return addr;
  };
  const uint32_t mean_shared = static_cast<uint32_t>(
      std::lround(options.shared_fraction * static_cast<double>(frames)));
  const uint32_t hi = frames - 1;
  const uint32_t lo =
      std::max<int64_t>(1, 2 * static_cast<int64_t>(mean_shared) - hi);

  std::vector<std::vector<uint64_t>> out;
  out.reserve(options.stacks);
  std::vector<uint64_t> prefix;
  for (uint32_t i = 0; i < options.stacks; ++i) {
    const uint32_t in_group = i % group;
    const size_t group_start = out.size() - in_group;
    std::vector<uint64_t> trace;
    trace.reserve(frames);
    if (options.shape == WorkloadShape::kFlat) {
      if (in_group == 0) {
        prefix.clear();
        for (uint32_t f = 0; f < std::min(mean_shared, hi); ++f)
          prefix.push_back(fresh());
      }
      trace = prefix;
    } else if (in_group > 0) {
      const std::vector<uint64_t>& parent =
          out[group_start + SplitMix64(rng) % in_group];
      const uint32_t d =
          lo + static_cast<uint32_t>(SplitMix64(rng) % (hi - lo + 1));
      trace.assign(parent.begin(), parent.begin() + d);
    }
    while (trace.size() < frames) trace.push_back(fresh());
    out.push_back(std::move(trace));
  }
  if (options.shuffle) {
    for (size_t i = out.size(); i > 1; --i) {
      std::swap(out[i - 1], out[SplitMix64(rng) % i]);
    }
  }
  return out;
}

}  // namespace tracehealth
