// Host trees whose size grows like a real host's with its thread count, for
// the agent's cost test and benchmark: /proc with a directory per process
// (comm, fd links, fdinfo) and a /proc/PID/task/TID directory per thread,
// /proc/vmallocinfo with a line per thread stack (VMAP_STACK), and the rest
// of a 6.16 host in the kernel's formats (tests/fixtures/hosts/generate.py
// writes the committed fixtures in the same formats).
//
// Thread safety: functions of their arguments (and the files they write).
#ifndef TRACEHEALTH_AGENT_TESTING_GENERATED_HOST_H_
#define TRACEHEALTH_AGENT_TESTING_GENERATED_HOST_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace tracehealth::agent {

struct GeneratedHost {
  uint64_t threads = 100;
  // Threads per process: the tree has ceil(threads / this) processes, each
  // with kFdsPerProcess fds.
  uint64_t threads_per_process = 100;
  // A /proc/PID/task/TID directory per thread (the agent must never walk
  // them; they make the tree as large as a real /proc).
  bool task_dirs = true;
  // CONFIG_KASAN, CONFIG_KASAN_GENERIC and CONFIG_KASAN_VMALLOC in the
  // config (the vmap purge model applies), else KASAN off.
  bool kasan_vmalloc = false;
  uint32_t cpus = 64;
  // Lines in available_filter_functions.
  uint64_t functions = 60000;
};

inline constexpr uint64_t kFdsPerProcess = 3;
// vmallocinfo lines other than thread stacks (modules, BPF, percpu, ...),
// 1 in 100 of them lazily freed ("unpurged vm_area").
inline constexpr uint64_t kBaseVmapAreas = 2000;

// One vmallocinfo line for a thread stack at `addr` (20,480 bytes: a 16 KiB
// stack and its guard page), with its '\n'.
std::string ThreadStackLine(uint64_t addr);

// Writes the host under `root` (created if needed; its parent must exist).
// Errors: the first file that could not be written.
absl::Status WriteGeneratedHost(const std::string& root,
                                const GeneratedHost& host);

// Rewrites `root`'s kernel config for `kasan_vmalloc` (a new collector reads
// it; the tree is otherwise unchanged).
absl::Status WriteGeneratedConfig(const std::string& root, bool kasan_vmalloc);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_TESTING_GENERATED_HOST_H_
