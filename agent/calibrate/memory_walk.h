// The agent's user-space walk: how the price of a visit of the fgraph walk
// grows with the size of the pass on this host (docs/design.md §13.1).
//
// Each pass of start_graph_tracing()'s loop visits a prefix of the task
// list, loading a few cache lines of each task_struct (its thread link, its
// ret_stack); a pass of w tasks touches those lines and pages of w
// task_structs, so once they no longer fit a cache level (or the TLB) every
// visit of that pass costs a miss. The walk here lays `tasks` nodes
// `stride` bytes apart (kTaskStride), each
// linked to the next in address order (threads created one after another
// sit in the list in that order), and times dependent passes that load two
// lines of each node, 1,536 bytes apart: what the kernel's visit loads,
// without tracefs, threads or privileges. It maps up to `max_bytes`
// of address space once, for the largest size (each size walks its
// prefix), and frees it at the end; its pages are small pages
// (MADV_NOHUGEPAGE), so only the pages the nodes touch are allocated
// (about 0.55 GiB at the largest size) and the kernel never compacts
// memory for it. The sizes are walked in turn, `repeats` sweeps, and each
// keeps its shortest timing. On hardware, where huge pages map the
// kernel's task_structs, a small-page walk also pays TLB misses the kernel
// does not, so its levels err towards pricing large passes high.
//
// Thread safety: a plain function.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_MEMORY_WALK_H_
#define TRACEHEALTH_AGENT_CALIBRATE_MEMORY_WALK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/tracehealth/v1/calibration.pb.h"

namespace tracehealth::agent {

// Bytes between the walk's nodes. Not the task_struct slab's object size
// (5,824 bytes on one 6.18 host, at most 8 KiB in the lab's 6.1 guest,
// where the walk reached 131,072 tasks in 1 GiB): a thread's task_struct sits
// among its other allocations (its kernel stack's pages come from the same
// pool), and in the lab the walk laid out at the slab's size put the step
// beyond 64k tasks (1.11x at 64k, 1.36x at 128k) where the kernel's walk
// stepped between 32k and 64k (1.59x); at 10,240 bytes the walk stepped
// there too (1.69x). Measured in one guest: an assumption elsewhere.
inline constexpr size_t kTaskStride = 10240;

struct MemoryWalkOptions {
  // The sizes walked: min_tasks, doubling while below max_tasks, then
  // max_tasks (capped so that max_tasks * stride <= max_bytes).
  uint64_t min_tasks = 1024;
  uint64_t max_tasks = 131072;
  // Bytes between nodes; at least 2,048 and a multiple of 64.
  size_t stride = kTaskStride;
  uint64_t max_bytes = uint64_t{1} << 30;
  // Visits timed per size and sweep (whole passes, at least this many),
  // and sweeps over all the sizes (each size's shortest kept: interference
  // only adds time).
  uint64_t min_visits = 2000000;
  int repeats = 3;
};

// The walk at each size, smallest first. InvalidArgument for a stride or
// sizes it cannot lay out; ResourceExhausted when the largest size cannot
// be mapped (no size is walked then: a partial curve would price the
// largest passes as the last size that fit); Internal when a timed walk did
// not go round exactly its nodes (checked after every timing).
absl::StatusOr<std::vector<v1::MemoryWalkPoint>> WalkMemory(
    const MemoryWalkOptions& options);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_MEMORY_WALK_H_
