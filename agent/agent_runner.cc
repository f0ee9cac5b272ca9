#include "agent/agent_runner.h"

#include <pthread.h>
#include <signal.h>

#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/agent_setup.h"
#include "agent/calibrate/calibrate_command.h"
#include "agent/calibrate/calibrator.h"
#include "agent/calibrate/host_pricing.h"
#include "agent/calibrate/journal.h"
#include "agent/collect/collector.h"
#include "agent/events/kmsg_events.h"
#include "agent/gate/gate_server.h"
#include "agent/gate/gate_service.h"
#include "agent/gate/unix_socket.h"
#include "agent/report/report_maker.h"
#include "agent/report/report_text.h"
#include "agent/report/textfile.h"
#include "agent/state/seq_store.h"
#include "agent/state/state_file.h"
#include "agent/uplink/spool.h"
#include "agent/uplink/streamer.h"
#include "common/kernel/feature_table.h"
#include "common/models/explain.h"
#include "common/procfs/host_fs.h"
#include "common/proto_json.h"

namespace tracehealth::agent {
namespace {

std::string Render(const v1::HostReport& report, const std::string& format) {
  if (format == "json") {
    ProtoJsonOptions opts;
    opts.pretty = true;
    absl::StatusOr<std::string> json = ProtoToJson(report, opts);
    if (!json.ok()) {
      return absl::StrCat("{\"error\": \"", json.status().message(), "\"}\n");
    }
    return *json;
  }
  return RenderReportText(report);
}

// Waits for SIGTERM/SIGINT on a dedicated thread (the signals are blocked in
// every other thread) and notifies `stop`.
class SignalWaiter {
 public:
  SignalWaiter() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGUSR2);  // internal: wakes the waiter at shutdown
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] {
      int sig = 0;
      sigwait(&set_, &sig);
      if (!stop_.HasBeenNotified()) stop_.Notify();
    });
  }
  ~SignalWaiter() {
    if (!stop_.HasBeenNotified())
      pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
  }
  absl::Notification& stop() { return stop_; }

 private:
  sigset_t set_;
  absl::Notification stop_;
  std::thread thread_;
};

// The spool and the streamer that empties it to --server.
struct Uplink {
  std::unique_ptr<Spool> spool;
  std::unique_ptr<Streamer> streamer;
};

int StartUplink(const AgentConfig& config, const std::string& state_dir,
                Uplink* up, std::ostream& err) {
  absl::StatusOr<std::unique_ptr<Spool>> s =
      Spool::Open(state_dir + "/spool", config.spool_max_bytes);
  if (!s.ok()) {
    err << "tracehealth-agent: spool: " << s.status().message() << "\n";
    return 1;
  }
  up->spool = std::move(*s);
  StreamerOptions sopts;
  sopts.server = config.server;
  sopts.tls_ca = config.tls_ca;
  sopts.tls_cert = config.tls_cert;
  sopts.tls_key = config.tls_key;
  sopts.tls_server_name = config.tls_server_name;
  sopts.whole_report_interval = config.whole_report_interval;
  absl::StatusOr<std::unique_ptr<Streamer>> st =
      Streamer::Create(sopts, up->spool.get());
  if (!st.ok()) {
    err << "tracehealth-agent: " << st.status().message() << "\n";
    return 2;
  }
  up->streamer = std::move(*st);
  up->streamer->Start();
  return 0;
}

// The local gate: checks answered from this agent's snapshots.
struct Gate {
  std::unique_ptr<GateService> service;
  std::unique_ptr<GateServer> server;
  void Publish(const v1::HostSnapshot& snapshot) {
    if (service != nullptr) service->Publish(snapshot);
  }
};

// Starts the gate unless --local_socket=none. A socket the operator named
// must start (exit code 1, or 2 for an unknown group); the default one only
// warns when it cannot be made.
int StartGate(const AgentConfig& config, const std::string& state_dir,
              const HostFs* fs, const ModelOptions& models, Gate* gate,
              std::ostream& err) {
  if (config.local_socket == "none") return 0;
  const bool named = !config.local_socket.empty();
  GateServerOptions so;
  so.socket_path = named ? config.local_socket : state_dir + "/gate.sock";
  if (!config.local_socket_group.empty()) {
    absl::StatusOr<gid_t> gid = GroupId(config.local_socket_group);
    if (!gid.ok()) {
      err << "tracehealth-agent: --local_socket_group: "
          << gid.status().message() << "\n";
      return 2;
    }
    so.group = *gid;
  }
  GateServiceOptions go;
  go.models = models;  // the reports' own
  go.answered_by = "agent unix:" + so.socket_path;
  auto service = std::make_unique<GateService>(fs, go);
  absl::StatusOr<std::unique_ptr<GateServer>> server =
      GateServer::Start(so, service.get());
  if (!server.ok()) {
    err << "tracehealth-agent: " << (named ? "" : "warning: ")
        << "--local_socket: " << server.status().message()
        << (named ? "" : "; no local gate") << "\n";
    return named ? 1 : 0;
  }
  gate->service = std::move(service);
  gate->server = *std::move(server);
  return 0;
}

// One report every interval until a signal or --max_reports: spooled when
// there is an uplink, printed (by `print`) otherwise; each cycle's snapshot
// goes to the gate. Exit code 1 when the seq cannot be persisted.
// `delivered` runs once a report is spooled or printed.
int MakeReports(const AgentConfig& config, SignalWaiter& signals, SeqStore& seq,
                ReportMaker& maker, Uplink& up, Gate& gate,
                const std::function<void(v1::HostReport*)>& print,
                const std::function<void()>& delivered,
                const std::function<void()>& log_warnings, std::ostream& err) {
  uint64_t made = 0;
  uint64_t first_seq = 0, last_seq = 0;
  absl::Time next = absl::Now();
  while (!signals.stop().HasBeenNotified()) {
    absl::StatusOr<uint64_t> n = seq.Next();
    if (!n.ok()) {
      err << "tracehealth-agent: seq: " << n.status().message() << "\n";
      return 1;
    }
    v1::AgentHealth health;
    if (up.streamer != nullptr) health = up.streamer->Health();
    v1::HostReport report = maker.Make(*n, health);
    gate.Publish(report.snapshot());
    if (!config.textfile.empty()) {
      absl::Status s = WriteTextfile(config.textfile, report);
      if (!s.ok())
        err << "tracehealth-agent: textfile: " << s.message() << "\n";
    }
    log_warnings();
    if (gate.server != nullptr) {
      for (const std::string& line : gate.server->TakeLog()) {
        err << "tracehealth-agent: " << line << "\n";
      }
    }
    if (up.spool != nullptr) {
      absl::Status s =
          up.spool->Append(report.seq(), report.SerializeAsString());
      if (s.ok()) {
        delivered();
      } else {
        err << "tracehealth-agent: spool: " << s.message() << "\n";
      }
      up.streamer->Wake();
    } else {
      print(&report);
      delivered();
    }
    ++made;
    if (first_seq == 0) first_seq = *n;
    last_seq = *n;
    if (config.max_reports > 0 && made >= config.max_reports) break;
    next += config.interval;
    absl::Time now = absl::Now();
    if (next < now) next = now;  // a slow cycle: do not burst to catch up
    signals.stop().WaitForNotificationWithTimeout(next - now);
  }
  uint64_t left = 0;
  if (up.streamer != nullptr) {
    // Send what is spooled while the shutdown budget lasts; the rest stays
    // in the spool for the next start.
    up.streamer->Flush(config.shutdown_flush_timeout);
    up.streamer->Stop();
    left = up.spool->depth();
  }
  err << "tracehealth-agent: stopped after " << made << " reports";
  if (made > 0) err << " (seq " << first_seq << ".." << last_seq << ")";
  err << ", " << left << " left in the spool\n";
  return 0;
}

// --calibrate: signals restore tracefs before the exit.
int Calibrate(const AgentConfig& config, const HostFs& fs,
              const std::string& state_dir, const std::string& host_id,
              const FeatureTable* features, std::ostream& out,
              std::ostream& err) {
  CalibrateCommand cmd;
  cmd.state_dir = state_dir;
  cmd.host_id = host_id;
  cmd.server = config.server;
  cmd.tls = {config.tls_ca, config.tls_cert, config.tls_key,
             config.tls_server_name};
  cmd.format = config.format;
  cmd.budget = config.calibrate_budget;
  cmd.threads = config.calibrate_threads;
  cmd.points = config.calibrate_points;
  cmd.repeats = config.calibrate_repeats;
  cmd.hold_for_test = config.calibrate_hold_for_test;
  cmd.features = features;
  SignalWaiter signals;
  return RunCalibrate(fs, cmd, &signals.stop(), out, err);
}

}  // namespace

int RunAgent(const AgentConfig& config, std::ostream& out, std::ostream& err) {
  Features features;
  std::string state_dir;
  int rc = CheckConfig(config, err);
  if (rc == 0) WarnAboutConfig(config, err);
  if (rc == 0) rc = LoadFeatures(config.feature_table, &features, err);
  if (rc == 0) rc = PrepareStateDir(config, &state_dir, err);
  if (rc != 0) return rc;

  HostFs fs(config.root);
  // Before anything else reads tracefs: a calibration killed mid-way left
  // its tracer and filter behind.
  absl::StatusOr<std::string> recovered =
      RecoverInterruptedCalibration(config.root, state_dir);
  if (!recovered.ok()) {
    err << "tracehealth-agent: warning: " << recovered.status().message()
        << "\n";
  } else if (!recovered->empty()) {
    err << "tracehealth-agent: " << *recovered << "\n";
  }
  std::string host_id;
  rc = ChooseHostId(config, fs, &host_id, err);
  if (rc != 0) return rc;
  if (config.calibrate)
    return Calibrate(config, fs, state_dir, host_id, features.get(), out, err);
  CollectorOptions copts;
  copts.state_dir = state_dir;
  copts.features = features.get();
  copts.fgraph.fdinfo_scan_interval = config.fdinfo_scan_interval;
  copts.fgraph.fdinfo_max_files = config.fdinfo_max_files;
  copts.vmallocinfo_interval = config.vmallocinfo_interval;
  Collector collector(&fs, copts, [] { return absl::Now(); });
  ReportOptions ropts;
  ropts.host_id = host_id;
  ropts.labels = config.labels;
  ropts.interval_seconds = absl::ToDoubleSeconds(config.interval);
  ropts.feature_table_override = features.rows;
  // One pricing for the reports, their explanations and the gate.
  std::string calibration_warning;
  const HostPricing pricing =
      LoadHostPricing(fs, state_dir, features.get(), &calibration_warning);
  ropts.models = HostModelOptions(pricing);
  ropts.calibration = pricing.calibration;
  if (!calibration_warning.empty()) {
    err << "tracehealth-agent: warning: " << calibration_warning << "\n";
  }
  // The kernel log's cursor lives in the state directory; a one-shot run
  // without one shows every event the log still holds.
  std::unique_ptr<KmsgEvents> events;
  if (config.kernel_log) {
    KmsgEventsOptions eopts;
    eopts.state_dir = state_dir;
    events = std::make_unique<KmsgEvents>(&fs, eopts);
    ropts.events = events.get();
  }
  ReportMaker maker(&collector, ropts, [] { return absl::Now(); });
  auto log_warnings = [&] {
    std::vector<std::string> warnings = collector.TakeWarnings();
    if (events != nullptr) {
      for (std::string& w : events->TakeWarnings()) {
        warnings.push_back(std::move(w));
      }
    }
    for (const std::string& w : warnings) {
      err << "tracehealth-agent: warning: " << w << "\n";
    }
  };
  auto delivered = [&] {
    if (events != nullptr) events->Delivered();
  };
  // A printed report is explained (summaries and bases); a streamed one
  // carries numbers only and the server explains it.
  auto print = [&](v1::HostReport* report) {
    ExplainPredictions(report->snapshot(), ropts.models,
                       report->mutable_predictions());
    out << Render(*report, config.format);
    out.flush();
  };
  if (config.once) {
    v1::HostReport report = maker.Make(0, v1::AgentHealth());
    log_warnings();
    print(&report);
    return 0;
  }

  absl::StatusOr<SeqStore> seq = SeqStore::Open(state_dir, host_id);
  if (!seq.ok()) {
    err << "tracehealth-agent: seq: " << seq.status().message() << "\n";
    return 1;
  }
  // Before any thread starts: threads inherit the blocked signals, which only
  // the waiter's thread takes.
  SignalWaiter signals;
  Gate gate;
  rc = StartGate(config, state_dir, &fs, ropts.models, &gate, err);
  if (rc != 0) return rc;
  Uplink up;
  if (!config.server.empty()) {
    rc = StartUplink(config, state_dir, &up, err);
    if (rc != 0) return rc;
  }
  return MakeReports(config, signals, *seq, maker, up, gate, print, delivered,
                     log_warnings, err);
}

}  // namespace tracehealth::agent
