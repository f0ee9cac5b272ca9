// ServerMetrics: the server's own Prometheus metrics (ingest, commit, query,
// storage), in one registry exposed on /metrics.
//
// Names follow Prometheus conventions: base units (seconds, bytes), `_total`
// for counters.
//
// Thread safety: every method is thread-safe (prometheus-cpp metrics are).
#ifndef TRACEHEALTH_SERVER_METRICS_SERVER_METRICS_H_
#define TRACEHEALTH_SERVER_METRICS_SERVER_METRICS_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace tracehealth::server {

class ServerMetrics {
 public:
  ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // tracehealth_ingest_reports_total{result=stored|duplicate|rejected|rate_limited}
  void CountStored(double n) { stored_->Increment(n); }
  void CountDuplicates(double n) { duplicate_->Increment(n); }
  void CountRejected() { rejected_->Increment(); }
  void CountRateLimited() { rate_limited_->Increment(); }
  // tracehealth_ingest_commit_seconds, tracehealth_ingest_batch_reports
  void ObserveCommit(double seconds, double reports);
  // tracehealth_ingest_streams (open Report streams)
  void StreamOpened() { streams_->Increment(); }
  void StreamClosed() { streams_->Decrement(); }
  // tracehealth_ingest_streams_refused_total (over --max_agent_streams)
  void CountStreamRefused() { streams_refused_->Increment(); }
  // tracehealth_ingest_heartbeat_forms_total{result=rebuilt|no_base}:
  // reports received in heartbeat form, rebuilt from their base or ending
  // their stream because the base is not held.
  void CountHeartbeatForm() { heartbeat_forms_->Increment(); }
  void CountHeartbeatFormNoBase() { heartbeat_forms_no_base_->Increment(); }
  // tracehealth_ingest_commit_failures_total
  void CountCommitFailure() { commit_failures_->Increment(); }

  // tracehealth_query_requests_total{method,code},
  // tracehealth_query_seconds{method}
  void ObserveQuery(absl::string_view method, absl::string_view code,
                    double seconds);

  // tracehealth_observed_events_total{kind,model,predicted}: observed
  // kernel events stored (server/events/event_recorder.h).
  void CountObservedEvent(absl::string_view kind, absl::string_view model,
                          absl::string_view predicted, double n = 1);

  // tracehealth_storage_bytes, tracehealth_hosts
  void SetStorageBytes(double bytes) { storage_bytes_->Set(bytes); }
  void SetHosts(double hosts) { hosts_->Set(hosts); }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* reports_family_;
  prometheus::Counter* stored_;
  prometheus::Counter* duplicate_;
  prometheus::Counter* rejected_;
  prometheus::Counter* rate_limited_;
  prometheus::Counter* commit_failures_;
  prometheus::Histogram* commit_seconds_;
  prometheus::Histogram* batch_reports_;
  prometheus::Gauge* streams_;
  prometheus::Counter* streams_refused_;
  prometheus::Counter* heartbeat_forms_;
  prometheus::Counter* heartbeat_forms_no_base_;
  prometheus::Family<prometheus::Counter>* query_requests_;
  prometheus::Family<prometheus::Histogram>* query_seconds_;
  prometheus::Family<prometheus::Counter>* observed_events_;
  prometheus::Gauge* storage_bytes_;
  prometheus::Gauge* hosts_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_METRICS_SERVER_METRICS_H_
