#include "agent/calibrate/memory_walk.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tracehealth::agent {
namespace {

// The second line a visit loads, this far from the node's link.
constexpr size_t kSecondLine = 1536;

// Where the loads' sum goes, so that they are not dropped.
volatile uintptr_t g_sink;

// Nanoseconds a visit takes over the ring of `tasks` nodes starting at
// `base`: one timing of whole passes, at least `min_visits` visits. Nullopt
// when the walk did not go round exactly those nodes (it must come back to
// `base`, having summed every node's index once a pass).
std::optional<double> TimeWalk(char* base, uint64_t tasks,
                               uint64_t min_visits) {
  const uint64_t passes =
      std::max<uint64_t>(1, (min_visits + tasks - 1) / tasks);
  const uint64_t visits = passes * tasks;
  uintptr_t sink = 0;
  char* p = base;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t v = 0; v < visits; ++v) {
    sink += *reinterpret_cast<volatile uintptr_t*>(p + kSecondLine);
    p = *reinterpret_cast<char* volatile*>(p);
  }
  const std::chrono::duration<double, std::nano> d =
      std::chrono::steady_clock::now() - t0;
  g_sink = sink;
  if (p != base || sink != passes * (tasks * (tasks - 1) / 2)) {
    return std::nullopt;
  }
  return d.count() / static_cast<double>(visits);
}

}  // namespace

absl::StatusOr<std::vector<v1::MemoryWalkPoint>> WalkMemory(
    const MemoryWalkOptions& o) {
  if (o.stride < 2048 || o.stride % 64 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory walk: stride ", o.stride, " is not a multiple of 64 >= 2048"));
  }
  const uint64_t cap = std::min<uint64_t>(o.max_tasks, o.max_bytes / o.stride);
  if (o.min_tasks < 2 || cap < o.min_tasks) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory walk: no size from ", o.min_tasks, " to ", cap, " tasks (",
        o.max_tasks, " asked, ", o.max_bytes, " bytes at most)"));
  }
  std::vector<uint64_t> sizes;
  for (uint64_t n = o.min_tasks; n < cap; n *= 2) sizes.push_back(n);
  sizes.push_back(cap);
  // One mapping, for the largest size; each size walks its prefix.
  const size_t bytes = static_cast<size_t>(cap) * o.stride;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("memory walk: cannot map ", bytes, " bytes for ", cap,
                     " tasks: ", std::strerror(errno)));
  }
  // No transparent huge pages: the walk touches a page or two a node, and
  // a kernel that backs the mapping with huge pages on first touch (THP
  // "always") would allocate, and may compact for, all of it.
  madvise(m, bytes, MADV_NOHUGEPAGE);
  char* base = static_cast<char*>(m);
  auto node = [&](uint64_t i) { return base + i * o.stride; };
  auto link = [&](uint64_t i, uint64_t next) {
    *reinterpret_cast<char**>(node(i)) = node(next);
  };
  for (uint64_t i = 0; i < cap; ++i) {
    link(i, i + 1 < cap ? i + 1 : 0);
    *reinterpret_cast<uintptr_t*>(node(i) + kSecondLine) = i;
  }
  // Every size in turn, `repeats` times, the shortest of each kept: a slow
  // spell of the host (the kernel still freeing the threads a calibration
  // just timed) lands on one sweep, not on every timing of one size.
  std::vector<double> best(sizes.size(), 0);
  for (int rep = 0; rep < std::max(o.repeats, 1); ++rep) {
    for (size_t s = 0; s < sizes.size(); ++s) {
      const uint64_t n = sizes[s];
      link(n - 1, 0);  // the ring of the first n nodes
      const std::optional<double> ns = TimeWalk(base, n, o.min_visits);
      link(n - 1, n < cap ? n : 0);
      if (!ns.has_value()) {
        munmap(m, bytes);
        return absl::InternalError(absl::StrCat(
            "memory walk: the walk of ", n, " tasks did not go round them"));
      }
      if (rep == 0 || *ns < best[s]) best[s] = *ns;
    }
  }
  munmap(m, bytes);
  std::vector<v1::MemoryWalkPoint> points;
  for (size_t s = 0; s < sizes.size(); ++s) {
    v1::MemoryWalkPoint p;
    p.set_tasks(sizes[s]);
    p.set_ns_per_task(best[s]);
    points.push_back(p);
  }
  return points;
}

}  // namespace tracehealth::agent
