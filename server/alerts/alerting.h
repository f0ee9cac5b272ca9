// Alerting: runs the alert engine inside the server.
//
// - OnCommitted() evaluates the report rules for a newly committed batch,
//   as the server priced it (server/calibration/report_pricer.h): each
//   report as the index and the queries show it (a host without a
//   calibration of its own priced with its hardware class's constants).
//   The server calls it after each commit on the report writer's publisher
//   thread ("ingest-publish"), before the host index takes the reports (a
//   replayed older seq is told from the batch's PreviousSeq). `increased`
//   rules compare with the host's previous report through the value they
//   read of it, kept per host (only with such rules). For a host without a
//   kept value (its first report since the server started) it is the
//   batch's Previous report (read once, for every reader of the batch).
// - A background thread, every `eval_interval` and promptly after changes,
//   advances `for` timers and silence rules over the host index, stores every
//   changed alert and hands it to each Alertmanager notifier configured.
//   Evaluation never waits for storage or Alertmanager.
// - With AlertTransitions (Options::transitions) each change is stored by
//   compare-and-set from the alert this server last saw stored, so that when
//   several replicas evaluate one host a transition is applied once: a
//   replica that loses takes the stored alert instead (AlertEngine::Adopt)
//   and notifies that one (Alertmanager deduplicates). Without, changes are
//   stored with AlertStore::PutAlert.
// - Start() restores stored pending/firing alerts, so a restart neither
//   forgets nor re-announces them.
// - collector() exports the alert families of server/alerts/alert_series.h
//   (per-host series for at most Options::metrics_max_hosts hosts, counts by
//   rule, state and severity for all) and the notifiers' counters.
//
// Thread safety: OnCommitted, Alerts and the collector may be called from
// any thread (the collector from the exposer's, concurrently with Stop).
// Start and Stop from the owner's thread.
#ifndef TRACEHEALTH_SERVER_ALERTS_ALERTING_H_
#define TRACEHEALTH_SERVER_ALERTS_ALERTING_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "prometheus/collectable.h"
#include "server/alerts/alert_row.h"
#include "server/alerts/alertmanager_notifier.h"
#include "server/alerts/engine.h"
#include "server/calibration/report_pricer.h"
#include "server/index/host_index.h"
#include "server/storage/alert_store.h"
#include "server/storage/alert_transitions.h"

namespace tracehealth::server {

class Alerting {
 public:
  struct Options {
    absl::Duration eval_interval = absl::Seconds(5);
    // Deliver firing/resolved alerts to each of these Alertmanagers (every
    // instance of a cluster: it deduplicates; never one load balancer).
    std::vector<AlertmanagerNotifier::Options> alertmanagers;
    // Not owned; null: changes are stored with PutAlert.
    AlertTransitions* transitions = nullptr;
    // Hosts with per-host tracehealth_alerts series at most (the worst).
    size_t metrics_max_hosts = 1000;
  };

  // `storage` and `index` are not owned and must outlive this object.
  Alerting(std::vector<AlertRule> rules, AlertStore* storage,
           const HostIndex* index, Options options,
           std::function<absl::Time()> now = absl::Now);
  ~Alerting();  // Stop()
  Alerting(const Alerting&) = delete;
  Alerting& operator=(const Alerting&) = delete;

  // Restores stored alerts and starts the evaluation thread. Errors: the
  // storage's (the server should not start without its alert state).
  absl::Status Start();

  // Stores what is pending, stops the thread and the notifier. Idempotent.
  void Stop();

  void OnCommitted(const PricedBatch& batch);

  std::vector<v1::Alert> Alerts() const { return engine_.Alerts(); }

  std::shared_ptr<prometheus::Collectable> collector() const;

 private:
  class Collector;
  // Per host, the FirstValue of each `increased` rule (in rule order) in
  // its newest report.
  using Values = absl::InlinedVector<std::optional<double>, 1>;
  Values ValuesOf(const v1::HostReport& report) const;
  void Run();
  // Stores and notifies `changed`.
  void Publish(const std::vector<v1::Alert>& changed);
  // Stores `a` by compare-and-set; returns what to notify (the stored
  // alert when another server's came first; nullopt when there is none).
  std::optional<v1::Alert> Transition(const v1::Alert& a);

  AlertEngine engine_;
  AlertStore* const storage_;
  const HostIndex* const index_;
  const Options options_;
  const std::function<absl::Time()> now_;
  // Written by the constructor and Stop(); Collect() reads it under mu_.
  std::vector<std::unique_ptr<AlertmanagerNotifier>> notifiers_;
  std::shared_ptr<Collector> collector_;

  // Indices of the `increased` rules.
  std::vector<size_t> increase_rules_;
  absl::Mutex values_mu_;
  absl::flat_hash_map<std::string, Values> previous_
      ABSL_GUARDED_BY(values_mu_);

  mutable absl::Mutex mu_;
  std::vector<v1::Alert> changed_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ = false;
  std::thread thread_;
  // The stored current alert of each (rule, host) as this server last saw
  // it; used by the evaluation thread only (and Start before it).
  std::map<std::pair<std::string, std::string>, AlertEpisode> stored_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_ALERTS_ALERTING_H_
