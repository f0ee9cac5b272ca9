#include "server/metrics/server_metrics.h"

#include <string>

namespace tracehealth::server {

ServerMetrics::ServerMetrics()
    : registry_(std::make_shared<prometheus::Registry>()) {
  reports_family_ = &prometheus::BuildCounter()
                         .Name("tracehealth_ingest_reports_total")
                         .Help("Reports received, by outcome.")
                         .Register(*registry_);
  stored_ = &reports_family_->Add({{"result", "stored"}});
  duplicate_ = &reports_family_->Add({{"result", "duplicate"}});
  rejected_ = &reports_family_->Add({{"result", "rejected"}});
  rate_limited_ = &reports_family_->Add({{"result", "rate_limited"}});
  auto& forms = prometheus::BuildCounter()
                    .Name("tracehealth_ingest_heartbeat_forms_total")
                    .Help(
                        "Reports received in heartbeat form: rebuilt from "
                        "their base, or not (no_base: the stream ended).")
                    .Register(*registry_);
  heartbeat_forms_ = &forms.Add({{"result", "rebuilt"}});
  heartbeat_forms_no_base_ = &forms.Add({{"result", "no_base"}});
  commit_failures_ = &prometheus::BuildCounter()
                          .Name("tracehealth_ingest_commit_failures_total")
                          .Help("Write transactions that failed.")
                          .Register(*registry_)
                          .Add({});
  commit_seconds_ = &prometheus::BuildHistogram()
                         .Name("tracehealth_ingest_commit_seconds")
                         .Help("Time to store and commit one batch.")
                         .Register(*registry_)
                         .Add({}, prometheus::Histogram::BucketBoundaries{
                                      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                      0.05, 0.1, 0.25, 0.5, 1, 2.5});
  batch_reports_ = &prometheus::BuildHistogram()
                        .Name("tracehealth_ingest_batch_reports")
                        .Help("Reports per committed batch.")
                        .Register(*registry_)
                        .Add({}, prometheus::Histogram::BucketBoundaries{
                                     1, 2, 5, 10, 20, 50, 100, 200, 500, 1000,
                                     2000, 5000, 10000});
  streams_ = &prometheus::BuildGauge()
                  .Name("tracehealth_ingest_streams")
                  .Help("Open ingest streams.")
                  .Register(*registry_)
                  .Add({});
  streams_refused_ =
      &prometheus::BuildCounter()
           .Name("tracehealth_ingest_streams_refused_total")
           .Help(
               "Ingest streams refused at once because the server served "
               "--max_agent_streams streams (RESOURCE_EXHAUSTED).")
           .Register(*registry_)
           .Add({});
  query_requests_ = &prometheus::BuildCounter()
                         .Name("tracehealth_query_requests_total")
                         .Help("Query API requests, by method and status code.")
                         .Register(*registry_);
  query_seconds_ = &prometheus::BuildHistogram()
                        .Name("tracehealth_query_seconds")
                        .Help("Query API handling time.")
                        .Register(*registry_);
  observed_events_ =
      &prometheus::BuildCounter()
           .Name("tracehealth_observed_events_total")
           .Help(
               "Soft lockups, RCU stalls and hung tasks the agents read "
               "from their kernel logs, by the model the backtrace is "
               "attributed to and whether that model predicted it.")
           .Register(*registry_);
  // Every series from zero, so that increase() sees the first event.
  for (const char* kind : {"soft_lockup", "rcu_stall", "hung_task"}) {
    for (const char* model : {"fgraph", "vmap", "depot", "none"}) {
      for (const char* predicted : {"yes", "no", "unknown"}) {
        CountObservedEvent(kind, model, predicted, 0);
      }
    }
  }
  storage_bytes_ = &prometheus::BuildGauge()
                        .Name("tracehealth_storage_bytes")
                        .Help("Bytes the store occupies on disk.")
                        .Register(*registry_)
                        .Add({});
  hosts_ = &prometheus::BuildGauge()
                .Name("tracehealth_hosts")
                .Help("Hosts known to the server.")
                .Register(*registry_)
                .Add({});
}

void ServerMetrics::ObserveCommit(double seconds, double reports) {
  commit_seconds_->Observe(seconds);
  batch_reports_->Observe(reports);
}

void ServerMetrics::ObserveQuery(absl::string_view method,
                                 absl::string_view code, double seconds) {
  query_requests_
      ->Add({{"method", std::string(method)}, {"code", std::string(code)}})
      .Increment();
  query_seconds_
      ->Add({{"method", std::string(method)}},
            prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005,
                                                    0.001, 0.0025, 0.005, 0.01,
                                                    0.025, 0.05, 0.1, 0.25, 1})
      .Observe(seconds);
}

void ServerMetrics::CountObservedEvent(absl::string_view kind,
                                       absl::string_view model,
                                       absl::string_view predicted, double n) {
  observed_events_
      ->Add({{"kind", std::string(kind)},
             {"model", std::string(model)},
             {"predicted", std::string(predicted)}})
      .Increment(n);
}

}  // namespace tracehealth::server
