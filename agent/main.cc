// tracehealth-agent: reads this host's kernel inputs, predicts the cost of
// tracing operations, and prints the result (--once) or streams a report
// every --interval to the server.

#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/agent_runner.h"
#include "common/flag_help.h"

ABSL_FLAG(std::string, root, "/",
          "Filesystem root of the host to read (a fixture tree for tests).");
ABSL_FLAG(std::string, state_dir, "",
          "Directory for the persisted seq, fgraph last-active record, stack "
          "depot history and the report spool (default "
          "/var/lib/tracehealth-agent; --once keeps nothing unless given).");
ABSL_FLAG(std::string, host_id, "",
          "Host identity (default: the hostname; where that is no valid id, "
          "e.g. '(none)', --once shows it as it is and a streaming agent "
          "derives one from /etc/machine-id).");
ABSL_FLAG(std::string, labels, "", "Operator labels: k=v,k2=v2.");
ABSL_FLAG(std::string, server, "",
          "Server address host:port, or several comma-separated (replicas: "
          "each new stream goes to the next); without it reports are printed.");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(15), "Report interval.");
ABSL_FLAG(bool, once, false,
          "Collect once, print the snapshot and predictions, exit.");
ABSL_FLAG(std::string, format, "text", "Output format: text or json.");
ABSL_FLAG(uint64_t, spool_max_bytes, 64ull << 20,
          "Bound of the on-disk report spool; the oldest reports are dropped "
          "(and counted) beyond it.");
ABSL_FLAG(absl::Duration, whole_report_interval, absl::Hours(6),
          "To a server that accepts them, reports whose content did not "
          "change since the last one sent whole go in a short heartbeat "
          "form; one goes whole at least this often. 0: every report whole.");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM file of the CA that signed the server.");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate (mTLS).");
ABSL_FLAG(std::string, tls_key, "", "PEM client key (mTLS).");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name to verify the server certificate against (default: the host "
          "part of --server).");
ABSL_FLAG(std::string, feature_table, "",
          "YAML file whose rows replace rows of the built-in feature table.");
ABSL_FLAG(absl::Duration, fdinfo_scan_interval, absl::Minutes(10),
          "How often to scan /proc/*/fdinfo for BPF kprobe_multi links.");
ABSL_FLAG(uint64_t, fdinfo_max_files, 1000000,
          "At most this many fds examined per fdinfo scan.");
ABSL_FLAG(absl::Duration, vmallocinfo_interval, absl::Minutes(10),
          "How often to read /proc/vmallocinfo (one line per thread stack) "
          "where the KASAN vmalloc purge model applies; inf: never.");
ABSL_FLAG(uint64_t, max_reports, 0,
          "Stop after this many reports (0: run until SIGTERM).");
ABSL_FLAG(absl::Duration, shutdown_flush_timeout, absl::Seconds(5),
          "On SIGTERM, how long to keep sending spooled reports.");
ABSL_FLAG(bool, kernel_log, true,
          "Read ROOT/dev/kmsg for soft lockups, RCU stalls and hung tasks "
          "(reported as observed events, from where the last report left "
          "off).");
ABSL_FLAG(std::string, local_socket, "",
          "Unix socket of the local gate API (tracehealthctl gate), mode 0660; "
          "default STATE_DIR/gate.sock, \"none\" for no gate; not served with "
          "--once.");
ABSL_FLAG(std::string, local_socket_group, "",
          "Group (name or gid) whose members may use --local_socket (default: "
          "root and the agent's user only).");

ABSL_FLAG(bool, calibrate, false,
          "Measure this host's fgraph walk cost with a bounded real attach "
          "(K idle threads, function_graph limited to one rarely called "
          "function, enabled twice and restored), store it in --state_dir "
          "(and send it to --server), print one line, exit: 0 calibrated, "
          "1 refused, 2 error.");
ABSL_FLAG(absl::Duration, calibrate_budget, absl::Seconds(1),
          "--calibrate: the longest walk the model may predict for it.");
ABSL_FLAG(uint64_t, calibrate_threads, 0,
          "--calibrate: idle threads to start (0: the most whose predicted "
          "walk fits --calibrate_budget; refused when the given number's "
          "does not).");
ABSL_FLAG(uint32_t, calibrate_points, 3,
          "--calibrate: thread counts measured (K/P, 2K/P, .., K; fewer "
          "when K/P would not exceed the walk's batch): c_visit and the "
          "per-pass cost are fitted over them.");
ABSL_FLAG(uint32_t, calibrate_repeats, 2,
          "--calibrate: rounds over the points, each with new threads; the "
          "shortest enables of each point are kept.");
ABSL_FLAG(std::string, textfile, "",
          "Directory of node_exporter's textfile collector: each report's "
          "predictions are also written to DIR/tracehealth.prom.");
ABSL_FLAG(absl::Duration, calibrate_hold_for_test, absl::ZeroDuration(),
          "--calibrate: wait this long after the first enable (tests kill "
          "the agent there); it only delays.");

constexpr char kUsage[] =
    "tracehealth-agent: predicts what kernel tracing will cost on this host.\n"
    "  tracehealth-agent --once            readable report of this host\n"
    "  tracehealth-agent --once --format=json\n"
    "  tracehealth-agent --server=HOST:PORT [--interval=15s]\n"
    "  tracehealth-agent --local_socket=PATH   print reports, serve the gate\n"
    "  tracehealth-agent --calibrate [--calibrate_budget=1s] "
    "[--server=HOST:PORT]";

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  if (tracehealth::WantsHelp(argc, argv)) {
    std::cout << tracehealth::FlagHelp(kUsage, {"agent/main.cc"});
    return 0;
  }
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    std::cerr << "tracehealth-agent: unexpected argument '" << rest[1]
              << "' (see --help)\n";
    return 2;
  }
  tracehealth::agent::AgentConfig config;
  config.root = absl::GetFlag(FLAGS_root);
  config.state_dir = absl::GetFlag(FLAGS_state_dir);
  config.host_id = absl::GetFlag(FLAGS_host_id);
  std::string labels = absl::GetFlag(FLAGS_labels);
  if (!labels.empty()) {
    for (absl::string_view kv :
         absl::StrSplit(labels, ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, '=');
      if (p.first.empty() || kv.find('=') == absl::string_view::npos) {
        std::cerr << "tracehealth-agent: --labels: '" << kv
                  << "' is not key=value\n";
        return 2;
      }
      config.labels[p.first] = p.second;
    }
  }
  config.server = absl::GetFlag(FLAGS_server);
  config.interval = absl::GetFlag(FLAGS_interval);
  config.once = absl::GetFlag(FLAGS_once);
  config.format = absl::GetFlag(FLAGS_format);
  config.spool_max_bytes = absl::GetFlag(FLAGS_spool_max_bytes);
  config.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  config.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  config.whole_report_interval = absl::GetFlag(FLAGS_whole_report_interval);
  config.feature_table = absl::GetFlag(FLAGS_feature_table);
  config.fdinfo_scan_interval = absl::GetFlag(FLAGS_fdinfo_scan_interval);
  config.fdinfo_max_files = absl::GetFlag(FLAGS_fdinfo_max_files);
  config.vmallocinfo_interval = absl::GetFlag(FLAGS_vmallocinfo_interval);
  config.max_reports = absl::GetFlag(FLAGS_max_reports);
  config.shutdown_flush_timeout = absl::GetFlag(FLAGS_shutdown_flush_timeout);
  config.kernel_log = absl::GetFlag(FLAGS_kernel_log);
  config.local_socket = absl::GetFlag(FLAGS_local_socket);
  config.local_socket_group = absl::GetFlag(FLAGS_local_socket_group);
  config.calibrate = absl::GetFlag(FLAGS_calibrate);
  config.calibrate_budget = absl::GetFlag(FLAGS_calibrate_budget);
  config.calibrate_threads = absl::GetFlag(FLAGS_calibrate_threads);
  config.calibrate_points = absl::GetFlag(FLAGS_calibrate_points);
  config.calibrate_repeats = absl::GetFlag(FLAGS_calibrate_repeats);
  config.calibrate_hold_for_test = absl::GetFlag(FLAGS_calibrate_hold_for_test);
  config.textfile = absl::GetFlag(FLAGS_textfile);
  return tracehealth::agent::RunAgent(config, std::cout, std::cerr);
}
