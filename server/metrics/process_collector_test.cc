#include "server/metrics/process_collector.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

using prometheus::MetricType;
using testing::NewTempDir;
using testing::WriteFile;

// Real lines of this format (a java process on the development machine,
// renamed, utime and stime set to 1234 and 566 ticks).
constexpr char kStat[] =
    "25671 (tracehealth-ser) S 1 25671 25671 0 -1 4194304 109291 658087 17 "
    "574 1234 566 2586 296 30 10 26 0 4894889 9245745152 69124 "
    "18446744073709551615 94085984112640 94085984113525 140731131281424 0 0 0 "
    "0 1 16800974 0 0 0 17 1 0 0 0 0 0 94085984124224 94085984124952 "
    "94086850170880 140731131282718 140731131284103 140731131284103 "
    "140731131285452 0\n";
constexpr char kProcStat[] =
    "cpu  4955387 318221 1071936 3314383 200111 0 36547 21338 9 0\n"
    "cpu0 2450418 146500 504833 1773509 59594 0 12927 10883 7 0\n"
    "intr 1432 0 9 0\n"
    "ctxt 9923413\n"
    "btime 1796112307\n"
    "processes 30311\n";
constexpr char kStatus[] =
    "Name:\ttracehealth-ser\n"
    "State:\tS (sleeping)\n"
    "VmRSS:\t  276496 kB\n"
    "Threads:\t26\n"
    "SigQ:\t1/96365\n";
constexpr char kLimits[] =
    "Limit                     Soft Limit           Hard Limit           Units "
    "    \n"
    "Max processes             96365                96365                "
    "processes \n"
    "Max open files            20000                65536                files "
    "    \n"
    "Max locked memory         8388608              8388608              bytes "
    "    \n";

// Values worked out from the lines above at 100 ticks a second, 4 KiB pages.
constexpr double kCpuSeconds = (1234 + 566) / 100.0;         // 18.0
constexpr double kStartTime = 1796112307 + 4894889 / 100.0;  // 1796161255.89
constexpr double kVirtualBytes = 9245745152;
constexpr double kResidentBytes = 69124.0 * 4096;  // 283131904
constexpr int kFixtureFds = 5;

std::string FixtureTree() {
  const std::string root = NewTempDir("proc-self");
  EXPECT_TRUE(WriteFile(root + "/proc/self/stat", kStat).ok());
  EXPECT_TRUE(WriteFile(root + "/proc/stat", kProcStat).ok());
  EXPECT_TRUE(WriteFile(root + "/proc/self/status", kStatus).ok());
  EXPECT_TRUE(WriteFile(root + "/proc/self/limits", kLimits).ok());
  for (int fd : {0, 1, 2, 3, 7}) {
    const std::string link = absl::StrCat(root, "/proc/self/fd/", fd);
    std::filesystem::create_directories(root + "/proc/self/fd");
    EXPECT_EQ(symlink("/dev/null", link.c_str()), 0) << link;
  }
  return root;
}

struct Sample {
  MetricType type;
  double value;
  std::string allocator = {};  // label, when the metric has one
};

std::map<std::string, Sample> Collect(const std::string& root) {
  ProcessCollectorOptions options;
  options.root = root;
  options.clock_ticks_per_second = 100;
  options.page_size = 4096;
  std::map<std::string, Sample> out;
  for (const auto& f : ProcessCollector(options).Collect()) {
    EXPECT_EQ(f.metric.size(), 1u) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    const auto& m = f.metric.at(0);
    Sample s{f.type,
             f.type == MetricType::Counter ? m.counter.value : m.gauge.value};
    for (const auto& l : m.label) {
      if (l.name == "allocator") s.allocator = l.value;
    }
    EXPECT_TRUE(out.emplace(f.name, s).second) << f.name << " twice";
  }
  return out;
}

// The metrics collected but tracehealth_heap_free_bytes (none under a
// sanitizer; ReadsEveryMetricFromTheTree checks it).
std::vector<std::string> Names(const std::map<std::string, Sample>& s) {
  std::vector<std::string> names;
  for (const auto& [name, sample] : s) {
    if (name != "tracehealth_heap_free_bytes") names.push_back(name);
  }
  return names;
}

const std::vector<std::string> kAll = {"process_cpu_seconds_total",
                                       "process_max_fds",
                                       "process_open_fds",
                                       "process_resident_memory_bytes",
                                       "process_start_time_seconds",
                                       "process_threads",
                                       "process_virtual_memory_bytes",
                                       "tracehealth_heap_allocated_bytes"};

std::vector<std::string> AllBut(std::vector<std::string> missing) {
  std::vector<std::string> names;
  for (const std::string& n : kAll) {
    if (std::find(missing.begin(), missing.end(), n) == missing.end()) {
      names.push_back(n);
    }
  }
  return names;
}

// The allocator the test binary links: tcmalloc unless built with
// --define=malloc=system (then glibc's, or a sanitizer's).
void ExpectLinkedAllocator(const std::string& allocator) {
#ifdef TRACEHEALTH_SYSTEM_MALLOC
  EXPECT_TRUE(allocator == "glibc" || allocator == "sanitizer") << allocator;
#else
  EXPECT_EQ(allocator, "tcmalloc");
#endif
}

TEST(ProcessCollectorTest, ReadsEveryMetricFromTheTree) {
  const auto s = Collect(FixtureTree());
  EXPECT_EQ(Names(s), kAll);
  const std::string allocator =
      s.at("tracehealth_heap_allocated_bytes").allocator;
  ExpectLinkedAllocator(allocator);
  EXPECT_GT(s.at("tracehealth_heap_allocated_bytes").value, 0);
  // A free figure but under a sanitizer, with the same label.
  EXPECT_EQ(s.count("tracehealth_heap_free_bytes"),
            allocator == "sanitizer" ? 0u : 1u);
  if (allocator != "sanitizer") {
    EXPECT_EQ(s.at("tracehealth_heap_free_bytes").allocator, allocator);
    EXPECT_GE(s.at("tracehealth_heap_free_bytes").value, 0);
  }
  EXPECT_EQ(s.at("process_cpu_seconds_total").type, MetricType::Counter);
  EXPECT_DOUBLE_EQ(s.at("process_cpu_seconds_total").value, 18.0);
  EXPECT_DOUBLE_EQ(s.at("process_cpu_seconds_total").value, kCpuSeconds);
  EXPECT_DOUBLE_EQ(s.at("process_start_time_seconds").value, kStartTime);
  EXPECT_DOUBLE_EQ(s.at("process_start_time_seconds").value, 1796161255.89);
  EXPECT_EQ(s.at("process_virtual_memory_bytes").value, kVirtualBytes);
  EXPECT_EQ(s.at("process_resident_memory_bytes").value, kResidentBytes);
  EXPECT_EQ(s.at("process_resident_memory_bytes").value, 283131904);
  EXPECT_EQ(s.at("process_open_fds").value, kFixtureFds);
  EXPECT_EQ(s.at("process_max_fds").value, 20000);  // soft, not hard 65536
  EXPECT_EQ(s.at("process_threads").value, 26);
  for (const char* gauge :
       {"process_start_time_seconds", "process_virtual_memory_bytes",
        "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
        "process_threads", "tracehealth_heap_allocated_bytes"}) {
    EXPECT_EQ(s.at(gauge).type, MetricType::Gauge) << gauge;
  }
}

TEST(ProcessCollectorTest, TheCommandNameMayHoldSpacesAndParentheses) {
  const std::string root = FixtureTree();
  ASSERT_TRUE(WriteFile(root + "/proc/self/stat",
                        absl::StrReplaceAll(
                            kStat, {{"(tracehealth-ser)", "(a) 1 2 (b c)"}}))
                  .ok());
  const auto s = Collect(root);
  EXPECT_DOUBLE_EQ(s.at("process_cpu_seconds_total").value, kCpuSeconds);
  EXPECT_EQ(s.at("process_resident_memory_bytes").value, kResidentBytes);
}

TEST(ProcessCollectorTest, ReadsTheFilesAtEachCollect) {
  const std::string root = FixtureTree();
  EXPECT_EQ(Collect(root).at("process_threads").value, 26);
  ASSERT_TRUE(WriteFile(root + "/proc/self/status",
                        absl::StrReplaceAll(kStatus, {{"\t26", "\t27"}}))
                  .ok());
  EXPECT_EQ(Collect(root).at("process_threads").value, 27);
  ASSERT_EQ(unlink((root + "/proc/self/fd/7").c_str()), 0);
  EXPECT_EQ(Collect(root).at("process_open_fds").value, kFixtureFds - 1);
}

// What each file gives, and that the others still appear without it.
TEST(ProcessCollectorTest, AMissingFileTakesOnlyItsOwnMetrics) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"/proc/self/stat",
       {"process_cpu_seconds_total", "process_resident_memory_bytes",
        "process_start_time_seconds", "process_virtual_memory_bytes"}},
      {"/proc/stat", {"process_start_time_seconds"}},
      {"/proc/self/limits", {"process_max_fds"}},
      {"/proc/self/status", {"process_threads"}},
      {"/proc/self/fd", {"process_open_fds"}},
  };
  for (const auto& [file, gone] : cases) {
    const std::string root = FixtureTree();
    ASSERT_GT(std::filesystem::remove_all(root + file), 0u) << file;
    EXPECT_EQ(Names(Collect(root)), AllBut(gone)) << "without " << file;
  }
}

TEST(ProcessCollectorTest, AMalformedFileGivesNoNumberFromIt) {
  struct Case {
    std::string file, from, to;
    std::vector<std::string> gone;
  };
  // Where the rss field starts.
  const size_t kRssAt = std::string(kStat).find(" 69124 ");
  const std::vector<std::string> stat_metrics = {
      "process_cpu_seconds_total", "process_resident_memory_bytes",
      "process_start_time_seconds", "process_virtual_memory_bytes"};
  const std::vector<Case> cases = {
      // Cut after vsize: no rss field.
      {"/proc/self/stat", std::string(kStat).substr(kRssAt), "\n",
       stat_metrics},
      {"/proc/self/stat", " 1234 566 ", " 1234x 566 ", stat_metrics},
      {"/proc/self/stat", "(tracehealth-ser)", "tracehealth-ser", stat_metrics},
      {"/proc/self/stat", " 9245745152 ", " -9245745152 ", stat_metrics},
      {"/proc/stat",
       "btime 1796112307",
       "btime soon",
       {"process_start_time_seconds"}},
      {"/proc/self/limits",
       "20000                65536",
       "many                 65536",
       {"process_max_fds"}},
      {"/proc/self/limits",
       "20000                65536                files",
       "20000                65536",
       {"process_max_fds"}},
      {"/proc/self/status",
       "Threads:\t26",
       "Threads:\t26 27",
       {"process_threads"}},
      {"/proc/self/status", "Threads:\t26", "Threads:\t", {"process_threads"}},
  };
  for (const Case& c : cases) {
    const std::string root = FixtureTree();
    const std::string original = c.file == "/proc/self/stat"     ? kStat
                                 : c.file == "/proc/stat"        ? kProcStat
                                 : c.file == "/proc/self/limits" ? kLimits
                                                                 : kStatus;
    const std::string broken = absl::StrReplaceAll(original, {{c.from, c.to}});
    ASSERT_NE(broken, original) << c.from;
    ASSERT_TRUE(WriteFile(root + c.file, broken).ok());
    EXPECT_EQ(Names(Collect(root)), AllBut(c.gone)) << c.file << ": " << c.to;
  }
}

// No soft limit: +Inf, above any count of descriptors (a hard limit of
// "unlimited" alone changes nothing).
TEST(ProcessCollectorTest, AnUnlimitedSoftLimitIsInfinity) {
  const std::string root = FixtureTree();
  ASSERT_TRUE(WriteFile(root + "/proc/self/limits",
                        absl::StrReplaceAll(
                            kLimits, {{"20000                65536",
                                       "20000                unlimited"}}))
                  .ok());
  EXPECT_EQ(Collect(root).at("process_max_fds").value, 20000);
  ASSERT_TRUE(WriteFile(root + "/proc/self/limits",
                        absl::StrReplaceAll(
                            kLimits, {{"20000                65536",
                                       "unlimited            unlimited"}}))
                  .ok());
  const double max = Collect(root).at("process_max_fds").value;
  EXPECT_TRUE(std::isinf(max) && max > 0) << max;
}

std::map<std::string, Sample> CollectLive() { return Collect("/"); }

// This process's open descriptors, counted without /proc: those fcntl knows.
int OpenDescriptors() {
  int n = 0;
  for (int fd = 0; fd < 65536; ++fd) n += fcntl(fd, F_GETFD) != -1;
  return n;
}

TEST(ProcessCollectorTest, CountsThisProcessesDescriptorsExactly) {
  const double before = CollectLive().at("process_open_fds").value;
  std::vector<int> fds;
  for (int i = 0; i < 10; ++i) {
    fds.push_back(open("/dev/null", O_RDONLY | O_CLOEXEC));
    ASSERT_GE(fds.back(), 0);
  }
  const auto s = CollectLive();
  EXPECT_EQ(s.at("process_open_fds").value, before + 10);
  EXPECT_EQ(s.at("process_open_fds").value, OpenDescriptors());
  // This process's own limit, and the metrics of the other files are read
  // from the live /proc as well.
  EXPECT_GT(s.at("process_max_fds").value, s.at("process_open_fds").value);
  EXPECT_GE(s.at("process_threads").value, 1);
  EXPECT_GT(s.at("process_resident_memory_bytes").value, 0);
  for (int fd : fds) close(fd);
  EXPECT_EQ(CollectLive().at("process_open_fds").value, before);
}

TEST(ProcessCollectorTest, HeapRisesByWhatIsAllocatedAndFallsWhenFreed) {
  constexpr size_t kBytes = size_t{64} << 20;  // 64 MiB
  const Sample before = CollectLive().at("tracehealth_heap_allocated_bytes");
  ExpectLinkedAllocator(before.allocator);
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 0x5a, kBytes);
  // Keeps the compiler from dropping the allocation.
  asm volatile("" : : "r"(block.get()) : "memory");
  const double held =
      CollectLive().at("tracehealth_heap_allocated_bytes").value;
  EXPECT_GE(held - before.value, static_cast<double>(kBytes))
      << before.allocator;
  block.reset();
  const double freed =
      CollectLive().at("tracehealth_heap_allocated_bytes").value;
  EXPECT_GE(held - freed, static_cast<double>(kBytes)) << before.allocator;
  std::printf("%s: %.0f bytes allocated, %+.0f with 64 MiB held, %+.0f freed\n",
              before.allocator.c_str(), before.value, held - before.value,
              freed - held);
}

}  // namespace
}  // namespace tracehealth::server
