// ProcessCollector: the server's own process metrics, read at each Collect
// (never cached) from ROOT/proc/self/... and from the allocator. Names and
// meanings are those every Prometheus client library exports:
//   process_cpu_seconds_total      counter  utime + stime of /proc/self/stat
//                                           over the clock ticks a second
//   process_start_time_seconds     gauge    stat's starttime over the clock
//                                           ticks a second + btime of
//                                           /proc/stat (seconds since epoch)
//   process_virtual_memory_bytes   gauge    stat's vsize
//   process_resident_memory_bytes  gauge    stat's rss (pages) x page size
//   process_open_fds               gauge    entries of /proc/self/fd
//   process_max_fds                gauge    the soft "Max open files" of
//                                           /proc/self/limits; +Inf when
//                                           "unlimited" (Go's client exports
//                                           2^64 - 1 there: no count reaches
//                                           either)
//   process_threads                gauge    "Threads" of /proc/self/status
//   tracehealth_heap_allocated_bytes{allocator}  bytes handed out by the
//       allocator and not yet freed
//   tracehealth_heap_free_bytes{allocator}  bytes the allocator holds mapped
//       for later allocations (not with allocator="sanitizer")
// allocator is the one linked into the process: "tcmalloc" (gperftools; its
// "generic.current_allocated_bytes", and "generic.heap_size" less allocated
// and "tcmalloc.pageheap_unmapped_bytes" for free), "sanitizer" (ASan or
// TSan builds, whose runtime owns malloc) or "glibc" (mallinfo2: uordblks +
// hblkhd allocated, fordblks free).
//
// Errors: a file that is missing, unreadable or not in its format gives no
// sample for the metrics read from it; the others are still collected.
// Collect never fails.
//
// Thread safety: Collect may be called from several threads at once (it
// holds no state; the allocators' queries are thread-safe).
#ifndef TRACEHEALTH_SERVER_METRICS_PROCESS_COLLECTOR_H_
#define TRACEHEALTH_SERVER_METRICS_PROCESS_COLLECTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace tracehealth::server {

struct ProcessCollectorOptions {
  // Directory holding proc/self/... and proc/stat ("/" for this process).
  std::string root = "/";
  // 0: sysconf(_SC_CLK_TCK) and sysconf(_SC_PAGESIZE).
  int64_t clock_ticks_per_second = 0;
  int64_t page_size = 0;
};

class ProcessCollector : public prometheus::Collectable {
 public:
  explicit ProcessCollector(ProcessCollectorOptions options = {});

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const std::string root_;  // without a trailing '/'
  const int64_t clock_ticks_;
  const int64_t page_size_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_METRICS_PROCESS_COLLECTOR_H_
