#include "server/metrics/process_collector.h"

#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/procfs/proc.h"
#include "common/read_file.h"
#include "server/ingest/descriptor_guard.h"

// Declared here, weak, rather than from gperftools' headers (not installed):
// null unless libtcmalloc_minimal or a sanitizer runtime is linked in, so one
// build of this file serves the tcmalloc, sanitizer and glibc binaries.
extern "C" {
int MallocExtension_GetNumericProperty(const char* property, size_t* value)
    __attribute__((weak));
size_t __sanitizer_get_current_allocated_bytes() __attribute__((weak));
}

namespace tracehealth::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

void Add(std::vector<MetricFamily>& out, const char* name, const char* help,
         MetricType type, double value,
         std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  if (type == MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  f.metric.push_back(std::move(m));
  out.push_back(std::move(f));
}

// The /proc/self/stat fields used, counted from the state (field 3, the
// first after the command name, which may hold spaces and parentheses).
struct Stat {
  uint64_t utime = 0;      // field 14, clock ticks
  uint64_t stime = 0;      // field 15
  uint64_t starttime = 0;  // field 22, clock ticks after boot
  uint64_t vsize = 0;      // field 23, bytes
  uint64_t rss_pages = 0;  // field 24
};

std::optional<Stat> ParseStat(absl::string_view text) {
  const size_t close = text.rfind(')');
  if (close == absl::string_view::npos) return std::nullopt;
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::StripAsciiWhitespace(text.substr(close + 1)), ' ',
                     absl::SkipEmpty());
  Stat s;
  // f[0] is field 3, so field N is f[N - 3].
  if (f.size() < 22 || !absl::SimpleAtoi(f[11], &s.utime) ||
      !absl::SimpleAtoi(f[12], &s.stime) ||
      !absl::SimpleAtoi(f[19], &s.starttime) ||
      !absl::SimpleAtoi(f[20], &s.vsize) ||
      !absl::SimpleAtoi(f[21], &s.rss_pages)) {
    return std::nullopt;
  }
  return s;
}

// The words after `key` on the line of `text` that starts with it.
std::optional<std::vector<absl::string_view>> LineAfter(absl::string_view text,
                                                        absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, key)) {
      return absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    }
  }
  return std::nullopt;
}

// /proc/self/limits: "Max open files  20000  20000  files".
std::optional<double> SoftOpenFileLimit(absl::string_view limits) {
  auto w = LineAfter(limits, "Max open files ");
  if (!w || w->size() != 3 || (*w)[2] != "files") return std::nullopt;
  if ((*w)[0] == "unlimited") return std::numeric_limits<double>::infinity();
  uint64_t n;
  if (!absl::SimpleAtoi((*w)[0], &n)) return std::nullopt;
  return static_cast<double>(n);
}

// /proc/self/status: "Threads:\t12".
std::optional<double> StatusThreads(absl::string_view status) {
  auto w = LineAfter(status, "Threads:");
  uint64_t n;
  if (!w || w->size() != 1 || !absl::SimpleAtoi((*w)[0], &n)) {
    return std::nullopt;
  }
  return static_cast<double>(n);
}

std::optional<size_t> TcmallocProperty(const char* name) {
  size_t v = 0;
  if (!MallocExtension_GetNumericProperty(name, &v)) return std::nullopt;
  return v;
}

void AddHeap(std::vector<MetricFamily>& out) {
  const char* allocator;
  std::optional<double> allocated;
  std::optional<double> free;
  if (__sanitizer_get_current_allocated_bytes != nullptr) {
    // The sanitizer's malloc, not glibc's, serves every allocation; its free
    // byte count is no real figure under TSan, so none is exported.
    allocator = "sanitizer";
    allocated = static_cast<double>(__sanitizer_get_current_allocated_bytes());
  } else if (MallocExtension_GetNumericProperty != nullptr) {
    allocator = "tcmalloc";
    const auto a = TcmallocProperty("generic.current_allocated_bytes");
    const auto heap = TcmallocProperty("generic.heap_size");
    const auto unmapped = TcmallocProperty("tcmalloc.pageheap_unmapped_bytes");
    if (a) allocated = static_cast<double>(*a);
    // Page heap, central and thread caches: mapped, ready to be handed out.
    if (a && heap && unmapped && *heap >= *a + *unmapped) {
      free = static_cast<double>(*heap - *a - *unmapped);
    }
  } else {
    allocator = "glibc";
    const struct mallinfo2 mi = mallinfo2();
    allocated = static_cast<double>(mi.uordblks + mi.hblkhd);
    free = static_cast<double>(mi.fordblks);
  }
  if (allocated) {
    Add(out, "tracehealth_heap_allocated_bytes",
        "Bytes the allocator has handed out and that are not yet freed.",
        MetricType::Gauge, *allocated, {{"allocator", allocator}});
  }
  if (free) {
    Add(out, "tracehealth_heap_free_bytes",
        "Bytes the allocator holds mapped for later allocations.",
        MetricType::Gauge, *free, {{"allocator", allocator}});
  }
}

}  // namespace

ProcessCollector::ProcessCollector(ProcessCollectorOptions options)
    : root_(absl::StripSuffix(options.root, "/")),
      clock_ticks_(options.clock_ticks_per_second > 0
                       ? options.clock_ticks_per_second
                       : sysconf(_SC_CLK_TCK)),
      page_size_(options.page_size > 0 ? options.page_size
                                       : sysconf(_SC_PAGESIZE)) {}

std::vector<MetricFamily> ProcessCollector::Collect() const {
  std::vector<MetricFamily> out;
  const double ticks = static_cast<double>(clock_ticks_);
  absl::StatusOr<std::string> text = ReadWholeFile(root_ + "/proc/self/stat");
  std::optional<Stat> stat;
  if (text.ok()) stat = ParseStat(*text);
  if (stat) {
    Add(out, "process_cpu_seconds_total",
        "Total user and system CPU time spent in seconds.", MetricType::Counter,
        static_cast<double>(stat->utime + stat->stime) / ticks);
    text = ReadWholeFile(root_ + "/proc/stat");
    absl::StatusOr<int64_t> btime =
        text.ok() ? ParseStatBtime(*text) : text.status();
    if (btime.ok()) {
      Add(out, "process_start_time_seconds",
          "Start time of the process since unix epoch in seconds.",
          MetricType::Gauge,
          static_cast<double>(*btime) +
              static_cast<double>(stat->starttime) / ticks);
    }
    Add(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
        MetricType::Gauge, static_cast<double>(stat->vsize));
    Add(out, "process_resident_memory_bytes", "Resident memory size in bytes.",
        MetricType::Gauge,
        static_cast<double>(stat->rss_pages) * static_cast<double>(page_size_));
  }
  // /proc/self/fd exactly, for the live process: CountOpen then leaves out
  // the descriptor it reads the directory with.
  absl::StatusOr<int64_t> fds =
      DescriptorGuard::CountOpen(root_ + "/proc/self/fd");
  if (fds.ok()) {
    Add(out, "process_open_fds", "Number of open file descriptors.",
        MetricType::Gauge, static_cast<double>(*fds));
  }
  text = ReadWholeFile(root_ + "/proc/self/limits");
  if (std::optional<double> max =
          text.ok() ? SoftOpenFileLimit(*text) : std::nullopt) {
    Add(out, "process_max_fds", "Maximum number of open file descriptors.",
        MetricType::Gauge, *max);
  }
  text = ReadWholeFile(root_ + "/proc/self/status");
  if (std::optional<double> threads =
          text.ok() ? StatusThreads(*text) : std::nullopt) {
    Add(out, "process_threads", "Number of OS threads in the process.",
        MetricType::Gauge, *threads);
  }
  AddHeap(out);
  return out;
}

}  // namespace tracehealth::server
