// Connections benchmark (prints figures; not a timed test): the server's
// memory per agent connection, one connection per simulated host, in five
// modes, each against a fresh server:
//  - idle, held: every host has sent one report, had it acked, and holds
//    its stream open without sending (agents before streams were closed
//    between reports);
//  - idle, closed: the same, but the stream was closed once acked and the
//    connection kept (the agent's behaviour: a connection without a call);
//  - idle, closed, spread: the same with the first reports spread over
//    --start_spread, as agents a rollout starts (fewer streams at once);
//  - streaming, held: every host sends one report per --report_interval on
//    one stream it holds;
//  - streaming, per report: the same on a new stream per report, closed
//    once acked, over the same connection (the agent's behaviour).
// The agents' hosts are known to the server before they connect, as when a
// server restarts and its agents reconnect: a first server stores each
// host's --preload_reports reports over a few connections and stops; the
// measured server starts on its data (the hosts' records in its index), and
// then every agent connects and sends its next report. So "a connection"
// is the connection, its streams and its report's write, not its host's
// record (priced per host: ~1.5 kB in query_benchmark). Prints, per mode,
// the server's RSS empty (the first server), restarted with the hosts and
// with the agents connected, the hosts' cost per host and the agents' cost
// per connection. With --heaptrack the server runs under heaptrack, is killed
// (SIGKILL) at the moment its RSS is sampled, and the heap still allocated
// then ("leaked" to heaptrack_print) is printed per connection against a
// server killed with the hosts stored and no agents (RSS under heaptrack is
// inflated; use the runs without it for RSS). heaptrack needs the server
// built with glibc malloc (--define=malloc=system): tcmalloc's operator new
// does not go through malloc, and heaptrack would miss it.
//
//   bazel run -c opt //tests/server:connections_benchmark -- --agents=5000
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"

ABSL_FLAG(int32_t, agents, 5000, "Simulated agents, one connection each");
ABSL_FLAG(double, report_interval, 1,
          "Seconds between a streaming agent's reports");
ABSL_FLAG(double, stream_seconds, 30, "How long the agents stream");
ABSL_FLAG(std::string, modes,
          "idle_held,idle_closed,idle_closed_spread,streaming_held,"
          "streaming_per_report",
          "Modes to measure, comma-separated");
ABSL_FLAG(double, start_spread, 20,
          "Seconds over which idle_closed_spread's agents send their first "
          "report (idle_closed: all at once)");
ABSL_FLAG(int32_t, preload_reports, 1,
          "Reports per host a first server stores before the measured one "
          "starts on its data (0: agents connect to an empty server, and "
          "each connection's figure includes its new host)");
ABSL_FLAG(int32_t, warm_reports, 0,
          "Reports the measured server stores from 8 other hosts before the "
          "agents connect, to fill the store's page cache to its bound as on "
          "a server with a fleet (0: none)");
ABSL_FLAG(bool, heap_from_metrics, false,
          "Also print the allocator's live heap per connection, from the "
          "server's tracehealth_heap_allocated_bytes before and with the "
          "agents (the scrape before them stays in the RSS with them, so the "
          "RSS figure of such a run is high by about 1 kB a connection)");
ABSL_FLAG(std::string, server_binary, "", "Server binary (default: runfiles)");
ABSL_FLAG(std::string, server_flags, "", "Extra server flags, space-separated");
ABSL_FLAG(std::string, heaptrack, "",
          "Directory for heaptrack files: run the server under heaptrack and "
          "print its live heap per connection");

namespace tracehealth {
namespace {

struct Mode {
  std::string name;
  bool streaming;
  bool per_report;
  // The agents' first reports spread over --start_spread (not all at once).
  bool spread = false;
};

// The server, or the child of heaptrack's script running it.
int ServerPid(const testing::ServerProcess& sp, bool heaptrack) {
  const int script = sp.process->pid();
  if (!heaptrack) return script;
  std::ifstream f(
      absl::StrCat("/proc/", script, "/task/", script, "/children"));
  int child = -1;
  while (f >> child) {
    std::ifstream comm(absl::StrCat("/proc/", child, "/comm"));
    std::string name;
    std::getline(comm, name);
    if (name.rfind("tracehealth-ser", 0) == 0) return child;
  }
  return -1;
}

// The server's tracehealth_heap_allocated_bytes (its allocator's count of
// live bytes), -1 when /metrics does not answer or lacks it.
double HeapAllocated(const std::string& metrics_addr) {
  absl::StatusOr<std::string> body = testing::HttpGet(metrics_addr, "/metrics");
  if (!body.ok()) return -1;
  for (absl::string_view line : absl::StrSplit(*body, '\n')) {
    if (!absl::StartsWith(line, "tracehealth_heap_allocated_bytes{")) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) return v;
  }
  return -1;
}

// Whether `pid` has a file whose path contains `name` mapped.
bool MapsLibrary(int pid, const std::string& name) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/maps"));
  std::string line;
  while (std::getline(f, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

// Live heap at the kill: heaptrack_print's "total memory leaked", bytes.
int64_t LeakedBytes(const std::string& file) {
  const std::string out = file + ".txt";
  const std::string cmd =
      absl::StrCat("heaptrack_print -f \"$(ls ", file, ".zst ", file,
                   ".gz 2>/dev/null | head -1)\" > ", out, " 2>&1");
  if (std::system(cmd.c_str()) != 0) return -1;
  std::ifstream f(out);
  std::string line;
  while (std::getline(f, line)) {
    const std::string key = "total memory leaked: ";
    size_t at = line.find(key);
    if (at == std::string::npos) continue;
    // e.g. "31.40M" (heaptrack prints K/M/G with a decimal point).
    std::string v = line.substr(at + key.size());
    double n = 0;
    const char unit = v.empty() ? ' ' : v.back();
    double mult = unit == 'K' ? 1e3 : unit == 'M' ? 1e6 : unit == 'G' ? 1e9 : 1;
    if (mult != 1) v.pop_back();
    if (!absl::SimpleAtod(v, &n)) return -1;
    return static_cast<int64_t>(n * mult);
  }
  return -1;
}

struct Figures {
  int64_t empty_kb = -1;      // before the hosts were stored
  int64_t restarted_kb = -1;  // restarted with them, before the warm-up
  int64_t base_kb = -1, loaded_kb = -1, leaked = -1;
  int64_t base_anon_kb = -1, loaded_anon_kb = -1;  // RssAnon: no file pages
  // tracehealth_heap_allocated_bytes on /metrics (-1: not exported).
  double base_heap = -1, loaded_heap = -1;
  int64_t threads = 0;
  uint64_t acked = 0, failed = 0;
};

// Runs `o` (reports_per_host each) to its end; an error unless every
// report was acked.
absl::Status LoadAll(server::LoadOptions o, absl::string_view what) {
  o.duration = absl::Seconds(300);
  absl::StatusOr<server::LoadResult> r = server::RunLoad(o);
  if (!r.ok()) return r.status();
  const uint64_t want = static_cast<uint64_t>(o.hosts) * o.reports_per_host;
  if (r->acked != want) {
    return absl::InternalError(
        absl::StrCat(what, ": ", r->acked, " of ", want,
                     " reports acked: ", r->first_error));
  }
  return absl::OkStatus();
}

// A first server on `data_dir` stores `reports` reports of each of the
// `agents` hosts over a few connections and stops. Returns its RSS (kB)
// before the reports: the server empty.
absl::StatusOr<int64_t> StoreHosts(const std::string& data_dir,
                                   const testing::ServerOptions& so, int agents,
                                   int reports) {
  auto first = testing::StartServerWith(data_dir, so);
  if (!first.ok()) return first.status();
  absl::SleepFor(absl::Seconds(2));
  const int64_t empty_kb = testing::StatusKb(first->process->pid(), "VmRSS");
  server::LoadOptions o;
  o.server = first->grpc_addr;
  o.hosts = agents;
  o.channels = 8;
  o.window = 4;
  o.reports_per_host = reports;
  absl::Status stored = LoadAll(o, "preload");
  if (!stored.ok()) return stored;
  (void)first->process->Signal(SIGTERM);
  auto code = first->process->Wait(absl::Seconds(60));
  if (!code.ok() || *code != 0) {
    return absl::InternalError("preload: the first server did not stop");
  }
  return empty_kb;
}

// A fresh server; `mode` (or none) runs against it; RSS sampled before and
// while loaded.
absl::StatusOr<Figures> Measure(const Mode* mode, int agents,
                                const std::string& heap_file) {
  const bool ht = !heap_file.empty();
  const testing::ScopedTempDir data("conn_bench");
  testing::ServerOptions so;
  so.flags = {"--host_report_rate=0"};
  for (absl::string_view f : absl::StrSplit(absl::GetFlag(FLAGS_server_flags),
                                            ' ', absl::SkipEmpty())) {
    so.flags.emplace_back(f);
  }
  so.binary = absl::GetFlag(FLAGS_server_binary);
  Figures fig;
  const int preload = absl::GetFlag(FLAGS_preload_reports);
  if (preload > 0) {  // also for heaptrack's server without agents
    absl::StatusOr<int64_t> empty =
        StoreHosts(data.path(), so, agents, preload);
    if (!empty.ok()) return empty.status();
    fig.empty_kb = *empty;
  }
  if (ht) so.prefix = {"/usr/bin/heaptrack", "-o", heap_file};
  auto sp = testing::StartServerWith(data.path(), so);
  if (!sp.ok()) return sp.status();
  absl::SleepFor(absl::Seconds(2));
  const int pid = ServerPid(*sp, ht);
  if (pid <= 0) {  // never kill(-1): that signals every process
    (void)sp->process->Signal(SIGKILL);
    return absl::NotFoundError(
        "the server's process under heaptrack was not found (its binary "
        "must be named tracehealth-server)");
  }
  if (ht && MapsLibrary(pid, "libtcmalloc")) {
    // tcmalloc replaces operator new without calling malloc, so heaptrack
    // would count only what is allocated by malloc (about half the heap).
    (void)sp->process->Signal(SIGKILL);
    return absl::FailedPreconditionError(
        "--heaptrack needs a server built with glibc malloc "
        "(bazel build -c opt --define=malloc=system //server:"
        "tracehealth-server): under tcmalloc heaptrack misses operator new");
  }
  if (preload == 0) fig.empty_kb = testing::StatusKb(pid, "VmRSS");
  fig.restarted_kb = testing::StatusKb(pid, "VmRSS");
  const int warm = absl::GetFlag(FLAGS_warm_reports);
  if (warm > 0) {
    // A few hosts outside the agents' range, a few streams at a time: the
    // store's page cache fills to its bound with little else left behind.
    server::LoadOptions o;
    o.server = sp->grpc_addr;
    o.hosts = 8;
    o.first_host = agents;
    o.channels = 8;
    o.window = 8;
    o.reports_per_host = (warm + 7) / 8;
    absl::Status warmed = LoadAll(o, "warm-up");
    if (!warmed.ok()) return warmed;
    absl::SleepFor(absl::Seconds(2));
  }
  fig.base_kb = testing::StatusKb(pid, "VmRSS");
  fig.base_anon_kb = testing::StatusKb(pid, "RssAnon");
  const bool heap = absl::GetFlag(FLAGS_heap_from_metrics) && !ht;
  if (heap) fig.base_heap = HeapAllocated(sp->metrics_addr);
  auto sample = [&] {
    fig.loaded_kb = testing::StatusKb(pid, "VmRSS");
    fig.loaded_anon_kb = testing::StatusKb(pid, "RssAnon");
    if (heap) fig.loaded_heap = HeapAllocated(sp->metrics_addr);
    fig.threads = testing::StatusKb(pid, "Threads");
    if (ht) kill(pid, SIGKILL);
  };
  if (mode == nullptr) {
    sample();
  } else {
    server::LoadOptions o;
    o.server = sp->grpc_addr;
    o.hosts = agents;
    o.channels = agents;
    o.window = 1;
    o.first_seq = preload + 1;
    o.stream_per_report = mode->per_report;
    if (mode->spread) {
      o.start_spread = absl::Seconds(absl::GetFlag(FLAGS_start_spread));
    }
    std::atomic<bool> stop{false};
    o.stop = &stop;
    absl::Notification ready;
    if (mode->streaming) {
      o.report_interval = absl::Seconds(absl::GetFlag(FLAGS_report_interval));
      o.duration = absl::Seconds(absl::GetFlag(FLAGS_stream_seconds));
      o.on_started = [&] { ready.Notify(); };
    } else {
      o.reports_per_host = 1;
      o.hold_open = !mode->per_report;
      o.duration = absl::Seconds(600);
      o.on_all_acked = [&] { ready.Notify(); };
    }
    absl::StatusOr<server::LoadResult> result;
    std::thread load([&] { result = server::RunLoad(o); });
    if (ready.WaitForNotificationWithTimeout(absl::Seconds(300))) {
      // Idle: let the last acks and closes settle; streaming: two thirds in.
      absl::SleepFor(mode->streaming ? o.duration * 2 / 3 : absl::Seconds(3));
      sample();
    }
    stop.store(true);
    load.join();
    if (!result.ok()) return result.status();
    fig.acked = result->acked;
    fig.failed = result->failed_streams;
    if (result->failed_streams > 0 && !ht) {
      std::fprintf(stderr, "%s: %llu streams failed (%s)\n", mode->name.c_str(),
                   static_cast<unsigned long long>(result->failed_streams),
                   result->first_error.c_str());
    }
  }
  if (ht) {
    (void)sp->process->Wait(absl::Seconds(300));
    fig.leaked = LeakedBytes(heap_file);
  } else {
    (void)sp->process->Signal(SIGTERM);
    (void)sp->process->Wait(absl::Seconds(60));
  }
  return fig;
}

int Main() {
  const uint64_t hard = server::RaiseOpenFileLimit();
  const int agents = absl::GetFlag(FLAGS_agents);
  std::printf("open files: hard limit %llu (soft raised to it) on both sides\n",
              static_cast<unsigned long long>(hard));
  if (static_cast<uint64_t>(agents) + 300 > hard) {
    std::fprintf(stderr, "%d agents need more than the hard limit %llu\n",
                 agents, static_cast<unsigned long long>(hard));
    return 1;
  }
  const std::vector<Mode> all = {{"idle_held", false, false},
                                 {"idle_closed", false, true},
                                 {"idle_closed_spread", false, true, true},
                                 {"streaming_held", true, false},
                                 {"streaming_per_report", true, true}};
  const std::string ht_dir = absl::GetFlag(FLAGS_heaptrack);
  int64_t heap_base = -1;
  if (!ht_dir.empty()) {
    auto none = Measure(nullptr, agents, ht_dir + "/none");
    if (!none.ok()) {
      std::fprintf(stderr, "%s\n", none.status().ToString().c_str());
      return 1;
    }
    heap_base = none->leaked;
    std::printf("heap with the hosts stored, without agents: %.1f MB\n",
                heap_base / 1e6);
  }
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_modes), ',', absl::SkipEmpty())) {
    const Mode* mode = nullptr;
    for (const Mode& m : all) {
      if (m.name == name) mode = &m;
    }
    if (mode == nullptr) {
      std::fprintf(stderr, "unknown mode %s\n", std::string(name).c_str());
      return 1;
    }
    auto fig =
        Measure(mode, agents, ht_dir.empty() ? "" : ht_dir + "/" + mode->name);
    if (!fig.ok()) {
      std::fprintf(stderr, "%s: %s\n", mode->name.c_str(),
                   fig.status().ToString().c_str());
      return 1;
    }
    std::printf(
        "%-21s %d agents: server RSS %.1f MB empty, %.1f MB restarted with "
        "their hosts (%.1f kB a host), %.1f MB warmed, %.1f MB with the "
        "agents connected: %.1f kB a connection (%.1f kB of it anonymous "
        "memory); %lld threads; %llu reports acked\n",
        mode->name.c_str(), agents, fig->empty_kb / 1024.0,
        fig->restarted_kb / 1024.0,
        static_cast<double>(fig->restarted_kb - fig->empty_kb) / agents,
        fig->base_kb / 1024.0, fig->loaded_kb / 1024.0,
        static_cast<double>(fig->loaded_kb - fig->base_kb) / agents,
        static_cast<double>(fig->loaded_anon_kb - fig->base_anon_kb) / agents,
        static_cast<long long>(fig->threads),
        static_cast<unsigned long long>(fig->acked));
    if (fig->base_heap >= 0 && fig->loaded_heap >= 0) {
      std::printf(
          "%-21s allocator's live heap %.1f MB without the agents, "
          "%.1f MB with them: %.1f kB a connection\n",
          mode->name.c_str(), fig->base_heap / 1048576.0,
          fig->loaded_heap / 1048576.0,
          (fig->loaded_heap - fig->base_heap) / 1024.0 / agents);
    }
    if (!ht_dir.empty()) {
      std::printf("%-21s live heap %.1f MB: %.1f kB a connection\n",
                  mode->name.c_str(), fig->leaked / 1e6,
                  (fig->leaked - heap_base) / 1024.0 / agents);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tracehealth::Main();
}
