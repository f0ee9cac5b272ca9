// Connections benchmark (prints figures; not a timed test): the server's
// memory per agent connection, one connection (and one Report stream) per
// simulated host, as agents have them:
//  - idle: every host has sent one report, had it acked, and holds its
//    stream open without sending (an agent between reports);
//  - streaming: every host sends one report per --report_interval.
// Prints the server's RSS with no agent, with N idle and N streaming ones,
// and the difference per connection; the open-file limits of both sides.
//
//   bazel run -c opt //tests/server:connections_benchmark -- --agents=5000
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"

ABSL_FLAG(int32_t, agents, 5000, "Simulated agents, one connection each");
ABSL_FLAG(double, report_interval, 1,
          "Seconds between a streaming agent's "
          "reports");
ABSL_FLAG(double, stream_seconds, 20, "How long the agents stream");
ABSL_FLAG(std::string, server_binary, "", "Server binary (default: runfiles)");
ABSL_FLAG(std::string, server_flags, "", "Extra server flags, space-separated");

namespace tracehealth {
namespace {

int64_t RssKb(const testing::ServerProcess& sp) {
  return testing::StatusKb(sp.process->pid(), "VmRSS");
}

// RunLoad on a thread; `sample` runs on this one once every host's first
// report is acked (then the load is stopped), or after `settle` when the
// hosts keep streaming.
template <typename Fn>
bool Phase(server::LoadOptions o, absl::Duration settle, Fn sample) {
  std::atomic<bool> stop{false};
  absl::Notification acked;
  o.stop = &stop;
  o.on_all_acked = [&] { acked.Notify(); };
  absl::StatusOr<server::LoadResult> result;
  std::thread load([&] { result = server::RunLoad(o); });
  const bool ok = acked.WaitForNotificationWithTimeout(absl::Seconds(300));
  if (ok) {
    absl::SleepFor(settle);
    sample();
  }
  stop.store(true);
  load.join();
  if (!result.ok()) {
    std::fprintf(stderr, "load: %s\n", result.status().ToString().c_str());
    return false;
  }
  if (result->failed_streams > 0) {
    std::fprintf(stderr, "load: %llu streams failed (%s)\n",
                 static_cast<unsigned long long>(result->failed_streams),
                 result->first_error.c_str());
  }
  return ok;
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
  const testing::ScopedTempDir data("conn_bench");
  std::vector<std::string> flags = {"--host_report_rate=0"};
  for (absl::string_view f : absl::StrSplit(absl::GetFlag(FLAGS_server_flags),
                                            ' ', absl::SkipEmpty())) {
    flags.emplace_back(f);
  }
  auto sp = testing::StartServer(data.path(), flags,
                                 absl::GetFlag(FLAGS_server_binary));
  if (!sp.ok()) {
    std::fprintf(stderr, "%s\n", sp.status().ToString().c_str());
    return 1;
  }
  absl::SleepFor(absl::Seconds(2));
  const int64_t base = RssKb(*sp);
  server::LoadOptions o;
  o.server = sp->grpc_addr;
  o.hosts = agents;
  o.channels = agents;
  o.window = 1;
  o.duration = absl::Seconds(600);
  o.reports_per_host = 1;
  o.hold_open = true;
  int64_t idle = -1;
  // The first connections store their hosts; a second idle round over the
  // same hosts measures connections alone (the index already holds them).
  for (uint64_t round = 1; round <= 2; ++round) {
    o.first_seq = round;
    int64_t threads = 0;
    if (!Phase(o, absl::Seconds(3), [&] {
          idle = RssKb(*sp);
          threads = testing::StatusKb(sp->process->pid(), "Threads");
        })) {
      return 1;
    }
    std::printf(
        "idle round %llu: %d connections, server RSS %.1f MB, %lld threads\n",
        static_cast<unsigned long long>(round), agents, idle / 1024.0,
        static_cast<long long>(threads));
  }
  const int64_t between = RssKb(*sp);
  o.first_seq = 3;
  o.reports_per_host = 0;
  o.hold_open = false;
  o.report_interval = absl::Seconds(absl::GetFlag(FLAGS_report_interval));
  o.duration = absl::Seconds(absl::GetFlag(FLAGS_stream_seconds));
  int64_t streaming = -1;
  {
    std::atomic<bool> stop{false};
    o.stop = &stop;
    absl::StatusOr<server::LoadResult> result;
    std::thread load([&] { result = server::RunLoad(o); });
    absl::SleepFor(o.duration * 0.75);
    streaming = RssKb(*sp);
    load.join();
    if (result.ok()) {
      std::printf("streaming: %d agents, %llu reports acked in %.1f s\n",
                  agents, static_cast<unsigned long long>(result->acked),
                  absl::ToDoubleSeconds(result->elapsed));
    }
  }
  std::printf(
      "server RSS: %.1f MB without agents, %.1f MB with %d idle (%.1f kB a "
      "connection), %.1f MB with them streaming a report each %.0f s (%.1f kB "
      "a connection); %.1f MB once they left\n",
      base / 1024.0, idle / 1024.0, agents,
      static_cast<double>(idle - base) / agents, streaming / 1024.0,
      absl::GetFlag(FLAGS_report_interval),
      static_cast<double>(streaming - base) / agents, between / 1024.0);
  (void)sp->process->Signal(SIGTERM);
  (void)sp->process->Wait(absl::Seconds(60));
  return 0;
}

}  // namespace
}  // namespace tracehealth

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tracehealth::Main();
}
