// The tracehealth-agent program behind its flags: validates the
// configuration, then either prints one report (--once), prints a report
// every interval (no --server), or streams reports to the server through the
// spool until SIGTERM/SIGINT (flush, exit 0) or --max_reports. Except with
// --once, it also serves the local gate (agent/gate) on a unix socket.
//
// Thread safety: call once per process (installs signal handling).
#ifndef TRACEHEALTH_AGENT_AGENT_RUNNER_H_
#define TRACEHEALTH_AGENT_AGENT_RUNNER_H_

#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include "absl/time/time.h"

namespace tracehealth::agent {

struct AgentConfig {
  std::string root = "/";
  // "" : /var/lib/tracehealth-agent, except that a one-shot run then keeps
  // no state at all.
  std::string state_dir;
  // "": the default (agent/collect/default_host_id.h).
  std::string host_id;
  std::map<std::string, std::string> labels;
  std::string server;
  absl::Duration interval = absl::Seconds(15);
  bool once = false;
  std::string format = "text";
  uint64_t spool_max_bytes = 64ull << 20;
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  // StreamerOptions::whole_report_interval (heartbeat forms; 0: none).
  absl::Duration whole_report_interval = absl::Hours(6);
  std::string feature_table;
  absl::Duration fdinfo_scan_interval = absl::Minutes(10);
  uint64_t fdinfo_max_files = 1000000;
  absl::Duration vmallocinfo_interval = absl::Minutes(10);
  uint64_t max_reports = 0;
  absl::Duration shutdown_flush_timeout = absl::Seconds(5);
  // Read ROOT/dev/kmsg for soft lockups, RCU stalls and hung tasks
  // (report.proto observed_events).
  bool kernel_log = true;
  // The gate's unix socket: "" is STATE_DIR/gate.sock (a failure to create
  // it is a warning), "none" serves no gate, any other path must work.
  std::string local_socket;
  // Group (name or number) whose members may use the socket; "" : only root
  // and the agent's user.
  std::string local_socket_group;
  // --calibrate: one calibration of the fgraph model on this host
  // (agent/calibrate/calibrate_command.h), then exit.
  bool calibrate = false;
  absl::Duration calibrate_budget = absl::Seconds(1);
  uint64_t calibrate_threads = 0;  // 0: chosen under the budget
  uint32_t calibrate_points = 3;   // thread counts measured, at most
  uint32_t calibrate_repeats = 2;  // rounds over them
  absl::Duration calibrate_hold_for_test = absl::ZeroDuration();
  // Each cycle's predictions also go to TEXTFILE/tracehealth.prom for
  // node_exporter's textfile collector (agent/report/textfile.h); "": none.
  std::string textfile;
};

// Every start first undoes a calibration that was killed (its journal in
// the state directory), and later runs use the stored calibration's
// constants (and carry it in their reports).
//
// Returns the process exit code: 0 on success, 2 for a configuration error,
// 1 for a runtime failure (message on `err`); with `calibrate`, 0
// calibrated, 1 refused, 2 error.
int RunAgent(const AgentConfig& config, std::ostream& out, std::ostream& err);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_AGENT_RUNNER_H_
