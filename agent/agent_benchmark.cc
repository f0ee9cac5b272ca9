// Cost of the agent's collection cycle on this machine.
//
// 1. In process, steady state: CPU time (getrusage) per cycle of collection
//    alone and of collection + models, on the live /proc and on the
//    240,000-thread fixture, with the same fixture rewritten to 100 threads
//    as the baseline (the ratio must stay ~1: cost does not grow with
//    threads). Also one fdinfo scan of the live /proc (the rare slow path).
// 2. The tracehealth-agent binary itself: N cycles printed to /dev/null;
//    CPU per cycle and peak RSS (ru_maxrss) from wait4().
//
// Usage: agent_benchmark [--cycles=N] [--agent=PATH] [--fixture=DIR]
// Targets: < 2 ms CPU per cycle, < 20 MB peak RSS.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/collect/collector.h"
#include "agent/collect/host_fs.h"
#include "common/models/evaluate.h"

ABSL_FLAG(int, cycles, 1000, "Cycles per in-process measurement.");
ABSL_FLAG(int, agent_cycles, 300, "Cycles of the agent binary.");
ABSL_FLAG(std::string, agent, "",
          "Path of tracehealth-agent (default: runfiles or bazel-bin).");
ABSL_FLAG(
    std::string, fixture, "",
    "Path of tests/fixtures/hosts (default: runfiles or the source tree).");

namespace tracehealth::agent {
namespace {

double ProcessCpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

struct Figures {
  double first_cycle_cpu_ms = 0;
  double collect_cpu_ms = 0;  // per steady cycle, collection only
  double cycle_cpu_ms = 0;    // per steady cycle, collection + models
  double cycle_wall_ms = 0;
  uint64_t opens_per_cycle = 0;
  uint64_t threads = 0;
};

Figures Measure(const std::string& root, int cycles) {
  HostFs fs(root);
  CollectorOptions o;  // fdinfo scan every 10 min: not in the steady state
  absl::Time now = absl::Now();
  Collector c(&fs, o, [&] { return now; });
  Figures f;
  double t0 = ProcessCpuSeconds();
  v1::HostSnapshot s = c.Collect();
  v1::Predictions p = PredictAll(s);
  f.first_cycle_cpu_ms = (ProcessCpuSeconds() - t0) * 1e3;
  f.threads = s.threads().total();
  // Collection only.
  uint64_t opens0 = fs.opens();
  t0 = ProcessCpuSeconds();
  for (int i = 0; i < cycles; ++i) {
    now += absl::Seconds(15);
    s = c.Collect();
  }
  f.collect_cpu_ms = (ProcessCpuSeconds() - t0) * 1e3 / cycles;
  f.opens_per_cycle = (fs.opens() - opens0) / cycles;
  // Collection + models.
  t0 = ProcessCpuSeconds();
  absl::Time w0 = absl::Now();
  for (int i = 0; i < cycles; ++i) {
    now += absl::Seconds(15);
    s = c.Collect();
    p = PredictAll(s);
  }
  f.cycle_cpu_ms = (ProcessCpuSeconds() - t0) * 1e3 / cycles;
  f.cycle_wall_ms = absl::ToDoubleMilliseconds(absl::Now() - w0) / cycles;
  return f;
}

void Print(const char* name, const Figures& f) {
  std::printf(
      "%-28s threads %7lu  first cycle %7.2f ms CPU  steady: collect %6.3f ms, "
      "collect+models %6.3f ms CPU (%6.3f ms wall), %lu opens/cycle\n",
      name, static_cast<unsigned long>(f.threads), f.first_cycle_cpu_ms,
      f.collect_cpu_ms, f.cycle_cpu_ms, f.cycle_wall_ms,
      static_cast<unsigned long>(f.opens_per_cycle));
}

std::string FirstExisting(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    if (!p.empty() && std::filesystem::exists(p)) return p;
  }
  return "";
}

std::string Runfiles(const std::string& rel) {
  const char* dir = std::getenv("RUNFILES_DIR");
  std::string base = dir != nullptr ? dir : "";
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  return FirstExisting({base.empty() ? "" : base + "/tracehealth/" + rel,
                        self + ".runfiles/tracehealth/" + rel});
}

double CurrentRssMb() {
  std::ifstream in("/proc/self/statm");
  unsigned long size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

// The 240k-thread fixture host and the same host with 100 threads.
void MeasureFixtures(const std::string& fixtures, int cycles) {
  // Both hosts are plain copies in a temp dir (runfiles are symlink farms,
  // whose extra lookups would skew the comparison).
  std::string src = fixtures + "/preempt-none-6.16-240k";
  std::string base =
      absl::StrCat(std::filesystem::temp_directory_path().string(),
                   "/agent_benchmark_", getpid());
  auto copy = [&](const std::string& dst) {
    std::filesystem::copy(src, dst,
                          std::filesystem::copy_options::recursive |
                              std::filesystem::copy_options::copy_symlinks);
    // Materialise symlinked files as regular files.
    for (auto& e : std::filesystem::recursive_directory_iterator(dst)) {
      if (e.is_symlink()) {
        auto target = std::filesystem::canonical(e.path());
        std::filesystem::remove(e.path());
        std::filesystem::copy_file(target, e.path());
      }
    }
  };
  std::filesystem::create_directories(base);
  copy(base + "/big");
  const Figures big = Measure(base + "/big", cycles);
  Print("fixture 240k threads", big);
  // Baseline: the same host with 100 threads.
  copy(base + "/small");
  std::ofstream(base + "/small/proc/loadavg") << "0.10 0.20 0.30 2/100 4321\n";
  const Figures small = Measure(base + "/small", cycles);
  std::filesystem::remove_all(base);
  Print("fixture 100 threads", small);
  std::printf("ratio 240k/100 threads (collect+models CPU): %.2f\n",
              big.cycle_cpu_ms / small.cycle_cpu_ms);
}

void MeasureFdinfoScan() {
  HostFs fs("/");
  CollectorOptions o;
  o.fgraph.fdinfo_scan_interval = absl::ZeroDuration();
  absl::Time now = absl::Now();
  Collector c(&fs, o, [&] { return now; });
  c.Collect();
  const int scans = 20;
  uint64_t opens0 = fs.opens();
  double t0 = ProcessCpuSeconds();
  for (int i = 0; i < scans; ++i) {
    now += absl::Seconds(15);
    c.Collect();
  }
  double with_scan = (ProcessCpuSeconds() - t0) * 1e3 / scans;
  std::printf(
      "live cycle with fdinfo scan: %.3f ms CPU, %lu opens "
      "(scan runs every --fdinfo_scan_interval, default 10 min)\n",
      with_scan, static_cast<unsigned long>((fs.opens() - opens0) / scans));
}

// The agent binary printing JSON every cycle, on this host and on fixtures.
void MeasureAgentBinary(const std::string& agent, const std::string& fixtures) {
  const int agent_cycles = absl::GetFlag(FLAGS_agent_cycles);
  std::string state =
      absl::StrCat(std::filesystem::temp_directory_path().string(),
                   "/agent_benchmark_state_", getpid());
  // The KASAN fixture has page_owner stacks, so the models measure the trie
  // on them instead of generating the seed workload (a one-time ~10 MB).
  for (const std::string& root :
       {std::string("/"),
        fixtures.empty() ? std::string() : fixtures + "/preempt-none-6.16-240k",
        fixtures.empty() ? std::string() : fixtures + "/kasan-6.12-256cpu"}) {
    if (root.empty()) continue;
    const std::string out_path = state + ".out";
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_WRONLY);
      int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(out, 1);
      dup2(null, 2);
      std::string a_root = "--root=" + root;
      std::string a_state = "--state_dir=" + state;
      std::string a_max = absl::StrCat("--max_reports=", agent_cycles);
      execl(agent.c_str(), agent.c_str(), a_root.c_str(), a_state.c_str(),
            "--host_id=bench", "--interval=1ms", "--format=json", a_max.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    struct rusage ru;
    absl::Time w0 = absl::Now();
    wait4(pid, &status, 0, &ru);
    double wall = absl::ToDoubleSeconds(absl::Now() - w0);
    double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
                 (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    // The agent's own RSS as its last report states it (steady state).
    double steady_rss_mb = 0;
    {
      std::ifstream in(out_path);
      std::string line;
      while (std::getline(in, line)) {
        size_t p = line.find("\"rss_bytes\": \"");
        if (p != std::string::npos) {
          steady_rss_mb =
              std::strtod(line.c_str() + p + 14, nullptr) / (1 << 20);
        }
      }
      std::filesystem::remove(out_path);
    }
    std::printf(
        "\ntracehealth-agent --root=%s: %d cycles (printing JSON), exit %d\n"
        "  CPU %.3f s total = %.3f ms per cycle (incl. start-up and JSON "
        "output), wall %.2f s\n  peak RSS (ru_maxrss) %.1f MB; RSS in the last "
        "report (steady state) %.1f MB\n",
        root.c_str(), agent_cycles, WEXITSTATUS(status), cpu,
        cpu * 1e3 / agent_cycles, wall, ru.ru_maxrss / 1024.0, steady_rss_mb);
  }
  std::filesystem::remove_all(state);
}

int Run() {
  const int cycles = absl::GetFlag(FLAGS_cycles);
  std::printf("RSS at start %.1f MB\n", CurrentRssMb());
  {
    HostFs fs("/");
    Collector c(&fs, CollectorOptions(), [] { return absl::Now(); });
    v1::HostSnapshot s = c.Collect();
    std::printf("RSS after the first collection %.1f MB\n", CurrentRssMb());
    PredictAll(s);
    std::printf("RSS after the first model evaluation %.1f MB\n",
                CurrentRssMb());
  }
  std::string fixtures = absl::GetFlag(FLAGS_fixture);
  if (fixtures.empty()) {
    fixtures = FirstExisting(
        {Runfiles("tests/fixtures/hosts"), "tests/fixtures/hosts"});
  }
  std::string agent = absl::GetFlag(FLAGS_agent);
  if (agent.empty()) {
    agent = FirstExisting({Runfiles("agent/tracehealth-agent"),
                           "bazel-bin/agent/tracehealth-agent"});
  }
  std::printf("agent_benchmark: %d cycles per measurement\n\n", cycles);

  Print("live /proc", Measure("/", cycles));
  if (!fixtures.empty()) MeasureFixtures(fixtures, cycles);
  // The rare path: one fdinfo scan of every process on this machine.
  MeasureFdinfoScan();
  std::printf("in-process peak RSS (benchmark process): %.1f MB\n", [] {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
  }());
  if (agent.empty()) {
    std::printf("\ntracehealth-agent binary not found; pass --agent\n");
    return 0;
  }
  MeasureAgentBinary(agent, fixtures);
  std::printf("\ntargets: < 2 ms CPU per cycle, < 20 MB RSS\n");
  return 0;
}

}  // namespace
}  // namespace tracehealth::agent

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tracehealth::agent::Run();
}
