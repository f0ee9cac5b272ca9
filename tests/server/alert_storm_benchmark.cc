// Alert storm benchmark (prints figures; not a timed test): --hosts
// load-generator hosts report once each to the real server with the shipped
// rules (deploy/alerts/rules.yaml, `for:` shortened to --for) and a real
// Alertmanager (Debian's prometheus-alertmanager) on loopback, as after a
// kernel rollout that puts most of a fleet at risk at once. Twice, each on a
// fresh server and Alertmanager:
//  - steady: Alertmanager up throughout;
//  - outage: Alertmanager stopped for --stop_seconds once it lists a third
//    of the firing alerts, then restarted (its memory of alerts is gone: the
//    server's retries and spread resends must bring every alert back).
// Prints, per run: the server's RSS before the load, its peak while alerts
// go pending, fire and are delivered, and after; pending and firing
// transitions stored per second (each one alert store write) as /metrics
// shows their counts grow; /metrics size and scrape time at the peak; the
// time from the end of the load until Alertmanager lists every firing
// alert; and whether any alert is missing from or listed twice in
// Alertmanager's view (GET /api/v2/alerts).
//
//   bazel run -c opt //tests/server:alert_storm_benchmark -- --hosts=50000
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/server/server_process.h"
#include "tests/util/alertmanager_process.h"
#include "tests/util/ports.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/loadgen.h"

ABSL_FLAG(int32_t, hosts, 50000, "Simulated hosts, one report each");
ABSL_FLAG(std::string, for_duration, "20s",
          "The rules' `for:` (instead of 5m and 15m)");
ABSL_FLAG(int32_t, stop_seconds, 60,
          "How long Alertmanager is down in the outage run");
ABSL_FLAG(std::string, resend_interval, "1m", "--alert_resend_interval");
ABSL_FLAG(std::string, modes, "steady,outage", "Runs, comma-separated");
ABSL_FLAG(double, timeout_seconds, 900, "Give up on a run after this long");

namespace tracehealth::testing {
namespace {

struct Sample {
  double pending = 0, firing = 0;
  size_t bytes = 0;
  absl::Duration scrape;
};

Sample ScrapeAlerts(const std::string& addr) {
  Sample s;
  const absl::Time t0 = absl::Now();
  absl::StatusOr<std::string> body = HttpGet(addr, "/metrics");
  s.scrape = absl::Now() - t0;
  if (!body.ok()) return s;
  s.bytes = body->size();
  for (absl::string_view line : absl::StrSplit(*body, '\n')) {
    if (!absl::StartsWith(line, "tracehealth_alert_hosts{")) continue;
    double v = 0;
    if (!absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) continue;
    if (absl::StrContains(line, "alertstate=\"pending\"")) s.pending += v;
    if (absl::StrContains(line, "alertstate=\"firing\"")) s.firing += v;
  }
  return s;
}

double Mb(int64_t kb) { return kb / 1024.0; }

int Run(const std::string& mode) {
  const bool outage = mode == "outage";
  const std::string dir = NewTempDir("alert-storm");
  const int am_port = PickFreePort();
  absl::StatusOr<std::unique_ptr<Subprocess>> am =
      StartAlertmanager(dir + "/am", am_port);
  if (!am.ok()) {
    std::fprintf(stderr, "%s\n", am.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::string> rules =
      ReadFile(Runfile("deploy/alerts/rules.yaml"));
  const std::string for_d =
      absl::StrCat("for: ", absl::GetFlag(FLAGS_for_duration));
  if (!rules.ok() ||
      !WriteFile(dir + "/rules.yaml",
                 absl::StrReplaceAll(*rules,
                                     {{"for: 5m", for_d}, {"for: 15m", for_d}}))
           .ok()) {
    std::fprintf(stderr, "cannot write the rules\n");
    return 1;
  }
  std::filesystem::create_directories(dir + "/server");
  absl::StatusOr<ServerProcess> server = StartServer(
      dir + "/server",
      {"--alert_rules=" + dir + "/rules.yaml",
       absl::StrCat("--alertmanager_url=http://127.0.0.1:", am_port),
       "--alert_eval_interval=1s",
       "--alert_resend_interval=" + absl::GetFlag(FLAGS_resend_interval)});
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  const int pid = server->process->pid();
  absl::SleepFor(absl::Seconds(2));
  const int64_t rss_before = StatusKb(pid, "VmRSS");

  server::RaiseOpenFileLimit();
  server::LoadOptions o;
  o.server = server->grpc_addr;
  o.hosts = absl::GetFlag(FLAGS_hosts);
  o.reports_per_host = 1;
  o.channels = 8;
  o.window = 4;
  o.duration = absl::Seconds(600);
  const absl::Time load_start = absl::Now();
  absl::StatusOr<server::LoadResult> load = server::RunLoad(o);
  const absl::Time load_end = absl::Now();
  if (!load.ok() || load->acked != static_cast<uint64_t>(o.hosts)) {
    std::fprintf(stderr, "load: %s\n",
                 load.ok() ? load->first_error.c_str()
                           : load.status().ToString().c_str());
    return 1;
  }

  // Poll until Alertmanager lists every firing alert once.
  int64_t rss_peak = 0;
  Sample peak, last;
  double pending_max = 0;
  absl::Time first_firing = absl::InfinitePast(), all_firing;
  absl::Time stopped_at = absl::InfinitePast(), restarted_at;
  absl::Time all_listed = absl::InfinitePast();
  std::map<std::pair<std::string, std::string>, int> listed;
  const absl::Time give_up =
      absl::Now() + absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds));
  bool am_down = false;
  while (absl::Now() < give_up) {
    last = ScrapeAlerts(server->metrics_addr);
    const absl::Time now = absl::Now();
    rss_peak = std::max(rss_peak, StatusKb(pid, "VmRSS"));
    if (last.bytes > peak.bytes) peak = last;
    pending_max = std::max(pending_max, last.pending);
    if (last.firing > 0 && first_firing == absl::InfinitePast())
      first_firing = now;
    if (last.pending == 0 && last.firing > 0) all_firing = now;
    if (am_down &&
        now - stopped_at >= absl::Seconds(absl::GetFlag(FLAGS_stop_seconds))) {
      am = StartAlertmanager(dir + "/am", am_port);
      if (!am.ok()) return 1;
      restarted_at = absl::Now();
      am_down = false;
    }
    if (!am_down) {
      absl::StatusOr<std::map<std::pair<std::string, std::string>, int>> a =
          ActiveAlerts(am_port);
      if (a.ok()) listed = *std::move(a);
      if (outage && stopped_at == absl::InfinitePast() && last.firing > 0 &&
          listed.size() * 3 >= last.firing) {
        (void)(*am)->Signal(SIGTERM);
        (void)(*am)->Wait(absl::Seconds(30));
        stopped_at = absl::Now();
        am_down = true;
        continue;
      }
      if (last.pending == 0 && last.firing > 0 &&
          listed.size() == static_cast<size_t>(last.firing) &&
          (!outage || stopped_at != absl::InfinitePast())) {
        all_listed = absl::Now();
        break;
      }
    }
    absl::SleepFor(absl::Milliseconds(500));
  }
  absl::SleepFor(absl::Seconds(5));
  const int64_t rss_after = StatusKb(pid, "VmRSS");
  const Sample after = ScrapeAlerts(server->metrics_addr);
  size_t twice = 0;
  for (const auto& [key, n] : listed) twice += n > 1;
  const double firing = after.firing;
  const long long missing =
      static_cast<long long>(firing) - static_cast<long long>(listed.size());
  const double pend_s = absl::ToDoubleSeconds(first_firing - load_start);
  const double fire_s = absl::ToDoubleSeconds(all_firing - first_firing);
  std::printf(
      "%s: hosts=%d load=%.1f s; alerts pending at most %.0f, firing %.0f\n",
      mode.c_str(), o.hosts, absl::ToDoubleSeconds(load_end - load_start),
      pending_max, firing);
  std::printf(
      "  store writes: %.0f pending transitions in %.1f s (%.0f/s, load "
      "start to first firing), %.0f firing in %.1f s (%.0f/s)\n",
      pending_max, pend_s, pend_s > 0 ? pending_max / pend_s : 0, firing,
      fire_s, fire_s > 0 ? firing / fire_s : 0);
  std::printf("  RSS: before %.1f MB, peak %.1f MB, after %.1f MB\n",
              Mb(rss_before), Mb(rss_peak), Mb(rss_after));
  std::printf(
      "  /metrics: largest %.2f MB scraped in %.0f ms; after %.2f MB in %.0f "
      "ms\n",
      peak.bytes / 1048576.0, absl::ToDoubleMilliseconds(peak.scrape),
      after.bytes / 1048576.0, absl::ToDoubleMilliseconds(after.scrape));
  if (outage && stopped_at != absl::InfinitePast()) {
    std::printf("  Alertmanager stopped %.1f s after the load for %.1f s\n",
                absl::ToDoubleSeconds(stopped_at - load_end),
                absl::ToDoubleSeconds(restarted_at - stopped_at));
  }
  if (all_listed == absl::InfinitePast()) {
    std::printf("  Alertmanager lists %zu of %.0f: TIMED OUT\n", listed.size(),
                firing);
    return 1;
  }
  std::printf(
      "  Alertmanager lists all %zu %.1f s after the load ended (%.1f s "
      "after the first firing%s); missing %lld, listed twice %zu\n",
      listed.size(), absl::ToDoubleSeconds(all_listed - load_end),
      absl::ToDoubleSeconds(all_listed - first_firing),
      outage ? absl::StrFormat(", %.1f s after its restart",
                               absl::ToDoubleSeconds(all_listed - restarted_at))
                   .c_str()
             : "",
      missing, twice);
  std::fflush(stdout);
  return missing == 0 && twice == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tracehealth::testing

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  int rc = 0;
  for (absl::string_view mode :
       absl::StrSplit(absl::GetFlag(FLAGS_modes), ',', absl::SkipEmpty())) {
    rc |= tracehealth::testing::Run(std::string(mode));
  }
  return rc;
}
