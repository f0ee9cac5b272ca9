// tracehealth-loadgen: streams realistic reports from N simulated hosts to a
// tracehealth-server and prints durable (acked) reports/s and ack latency.
#include <cstdio>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/client_credentials.h"
#include "common/flag_help.h"
#include "tools/loadgen/loadgen.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7443",
          "tracehealth-server gRPC address");
ABSL_FLAG(int32_t, hosts, 100, "Simulated hosts (one stream each)");
ABSL_FLAG(int32_t, first_host, 0, "Index of the first simulated host");
ABSL_FLAG(uint64_t, first_seq, 1, "First seq of every host");
ABSL_FLAG(double, seconds, 10, "How long to stream");
ABSL_FLAG(uint64_t, reports_per_host, 0,
          "Stop each host after this many (0: no limit)");
ABSL_FLAG(int32_t, window, 64, "Unacked reports in flight per stream");
ABSL_FLAG(int32_t, channels, 4,
          "gRPC connections the streams share (one per host: --channels equal "
          "to --hosts; the open-file limit is raised to its hard limit)");
ABSL_FLAG(absl::Duration, report_interval, absl::ZeroDuration(),
          "Each host sends at most one report this often (0: as fast as "
          "--window allows)");
ABSL_FLAG(bool, hold_open, false,
          "After --reports_per_host, keep each stream open, idle, until "
          "--seconds end");
ABSL_FLAG(absl::Duration, start_spread, absl::ZeroDuration(),
          "Start the hosts' first streams evenly over this time instead of "
          "all at once");
ABSL_FLAG(bool, stream_per_report, false,
          "Send each report on a stream of its own, closed once acked, and "
          "keep each host's channel connected (the agent's behaviour); with "
          "--reports_per_host the hosts then idle on their connections until "
          "--seconds end");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA of the server certificate (enables TLS)");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate (mTLS; the server then accepts only the "
          "hosts it names)");
ABSL_FLAG(std::string, tls_key, "", "PEM client key (mTLS)");
ABSL_FLAG(std::string, tls_server_name, "",
          "Expected server name, when not the address");

constexpr char kUsage[] =
    "tracehealth-loadgen: streams reports of simulated hosts to a "
    "tracehealth-server and prints\nacked reports/s and ack latency.\n"
    "  tracehealth-loadgen --server=HOST:PORT [--hosts=100] [--seconds=10]";

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  if (tracehealth::WantsHelp(argc, argv)) {
    std::cout << tracehealth::FlagHelp(kUsage,
                                       {"tools/loadgen/loadgen_main.cc"});
    return 0;
  }
  // As in the server: no lock-order graph on every absl::Mutex operation
  // (the system's absl is built without NDEBUG).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  tracehealth::ClientTls tls;
  tls.ca_file = absl::GetFlag(FLAGS_tls_ca);
  tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  tls.key_file = absl::GetFlag(FLAGS_tls_key);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  auto creds = tracehealth::ClientCredentials(tls);
  if (!creds.ok()) {
    std::fprintf(stderr, "tracehealth-loadgen: %s\n",
                 creds.status().ToString().c_str());
    return 2;
  }
  tracehealth::server::LoadOptions o;
  o.server = absl::GetFlag(FLAGS_server);
  o.credentials = *creds;
  o.tls_server_name = tls.server_name;
  o.hosts = absl::GetFlag(FLAGS_hosts);
  o.first_host = absl::GetFlag(FLAGS_first_host);
  o.first_seq = absl::GetFlag(FLAGS_first_seq);
  o.duration = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  o.reports_per_host = absl::GetFlag(FLAGS_reports_per_host);
  o.window = absl::GetFlag(FLAGS_window);
  o.channels = absl::GetFlag(FLAGS_channels);
  o.report_interval = absl::GetFlag(FLAGS_report_interval);
  o.hold_open = absl::GetFlag(FLAGS_hold_open);
  o.stream_per_report = absl::GetFlag(FLAGS_stream_per_report);
  o.start_spread = absl::GetFlag(FLAGS_start_spread);
  const uint64_t hard = tracehealth::server::RaiseOpenFileLimit();
  if (o.channels > 0 && static_cast<uint64_t>(o.channels) + 64 > hard) {
    std::fprintf(stderr,
                 "tracehealth-loadgen: %d channels need more descriptors than "
                 "the hard open-file limit %llu\n",
                 o.channels, static_cast<unsigned long long>(hard));
    return 2;
  }
  auto r = tracehealth::server::RunLoad(o);
  if (!r.ok()) {
    std::fprintf(stderr, "tracehealth-loadgen: %s\n",
                 r.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "hosts=%d report_bytes=%lld sent=%llu acked=%llu rejected=%llu "
      "failed_streams=%llu "
      "elapsed=%.2fs\n"
      "durable_reports_per_second=%.0f\n"
      "ack_latency p50=%s p90=%s p99=%s max=%s\n",
      o.hosts, static_cast<long long>(r->report_bytes),
      static_cast<unsigned long long>(r->sent),
      static_cast<unsigned long long>(r->acked),
      static_cast<unsigned long long>(r->rejected),
      static_cast<unsigned long long>(r->failed_streams),
      absl::ToDoubleSeconds(r->elapsed), r->acked_per_second,
      absl::FormatDuration(r->ack_p50).c_str(),
      absl::FormatDuration(r->ack_p90).c_str(),
      absl::FormatDuration(r->ack_p99).c_str(),
      absl::FormatDuration(r->ack_max).c_str());
  if (!r->first_error.empty())
    std::fprintf(stderr,
                 "tracehealth-loadgen: %llu of %d streams failed, first: %s\n",
                 static_cast<unsigned long long>(r->failed_streams), o.hosts,
                 r->first_error.c_str());
  return r->failed_streams == 0 ? 0 : 1;
}
