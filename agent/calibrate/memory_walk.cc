#include "agent/calibrate/memory_walk.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tracehealth::agent {
namespace {

// The second line a visit loads, this far from the node's link.
constexpr size_t kSecondLine = 1536;

// Where the loads' sum goes, so that they are not dropped.
volatile uintptr_t g_sink;

// Nanoseconds a visit of `tasks` nodes laid out at `base` takes: the
// shortest of `repeats` timings of at least `min_visits` visits.
double TimeWalk(char* base, uint64_t tasks, const MemoryWalkOptions& o) {
  const uint64_t visits = std::max(o.min_visits, tasks);
  double best = 0;
  uintptr_t sink = 0;
  for (int rep = 0; rep < std::max(o.repeats, 1); ++rep) {
    char* p = base;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t v = 0; v < visits; ++v) {
      sink += *reinterpret_cast<volatile uintptr_t*>(p + kSecondLine);
      p = *reinterpret_cast<char* volatile*>(p);
    }
    const std::chrono::duration<double, std::nano> d =
        std::chrono::steady_clock::now() - t0;
    const double ns = d.count() / static_cast<double>(visits);
    if (rep == 0 || ns < best) best = ns;
  }
  g_sink = sink;
  return best;
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
  std::vector<v1::MemoryWalkPoint> points;
  for (uint64_t n : sizes) {
    const size_t bytes = static_cast<size_t>(n) * o.stride;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
      return absl::ResourceExhaustedError(
          absl::StrCat("memory walk: cannot map ", bytes, " bytes for ", n,
                       " tasks: ", std::strerror(errno)));
    }
    // No transparent huge pages: the walk touches a page or two a node, and
    // a kernel that backs the mapping with huge pages on first touch
    // (THP "always") would allocate, and may compact for, all of it.
    madvise(m, bytes, MADV_NOHUGEPAGE);
    char* base = static_cast<char*>(m);
    for (uint64_t i = 0; i < n; ++i) {
      char* node = base + i * o.stride;
      *reinterpret_cast<char**>(node) = base + ((i + 1) % n) * o.stride;
      *reinterpret_cast<uintptr_t*>(node + kSecondLine) = i;
    }
    v1::MemoryWalkPoint p;
    p.set_tasks(n);
    p.set_ns_per_task(TimeWalk(base, n, o));
    munmap(m, bytes);
    points.push_back(p);
  }
  return points;
}

}  // namespace tracehealth::agent
