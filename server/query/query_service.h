// QueryService: the FleetQuery gRPC service (pre-attach predictions and
// rollout plans, host views, fleet summary, alerts, observed events),
// answered from the in-memory HostIndex's compact records; reports are read
// from the store only for what is shown with its explanation (GetHost, the
// answers of PredictAttach) and for history, events from the event store.
//
// The Do* methods hold the logic and are callable without gRPC (tests);
// the callback-API overrides add bearer-token checks and metrics. They take
// the request's bytes and decode them here, so that a request that does not
// decode is answered INVALID_ARGUMENT (gRPC's own decoding answers
// UNIMPLEMENTED). Error messages echo a client's input at most kEchoBytes
// long (common/escape.h).
//
// Thread safety: all methods are thread-safe (the index and the alert store
// are).
#ifndef TRACEHEALTH_SERVER_QUERY_QUERY_SERVICE_H_
#define TRACEHEALTH_SERVER_QUERY_QUERY_SERVICE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/status.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "server/index/host_index.h"
#include "server/metrics/server_metrics.h"
#include "server/storage/alert_store.h"
#include "server/storage/event_store.h"
#include "server/storage/report_store.h"

namespace re2 {
class RE2;
}

namespace tracehealth::server {

struct QueryOptions {
  // Bearer token required in the "authorization" metadata; empty: none.
  std::string token;
  // When set, only clients whose verified certificate has a name (the CN or
  // a subject alternative name) that this pattern matches in full may
  // query; others get PERMISSION_DENIED. Null: any client (that has the
  // token) may, agents' certificates included.
  std::shared_ptr<const re2::RE2> client_names;
  // A host is stale after this many report intervals without a report.
  double stale_after_intervals = 3;
  // Interval assumed when a report does not carry one.
  absl::Duration default_interval = absl::Seconds(60);
  std::function<absl::Time()> now = [] { return absl::Now(); };
  // The store of the reports (not owned). GetHost and GetHostHistory read
  // it, and PredictAttach the reports of the hosts it answers for (to
  // explain them); null: GetHost and GetHostHistory are UNAVAILABLE and
  // PredictAttach answers with unexplained predictions.
  ReportStore* store = nullptr;
  // Threads a fleet-wide PredictAttach spreads the index's shards over.
  int scan_threads = 2;
  // The store ListEvents reads (not owned); null: it is UNAVAILABLE.
  EventStore* events = nullptr;
};

// The seven FleetQuery methods, each taking and returning raw bytes.
using RawFleetQueryService =
    v1::FleetQuery::WithRawCallbackMethod_PredictAttach<
        v1::FleetQuery::WithRawCallbackMethod_GetHost<
            v1::FleetQuery::WithRawCallbackMethod_ListHosts<
                v1::FleetQuery::WithRawCallbackMethod_ListAlerts<
                    v1::FleetQuery::WithRawCallbackMethod_FleetSummary<
                        v1::FleetQuery::WithRawCallbackMethod_GetHostHistory<
                            v1::FleetQuery::WithRawCallbackMethod_ListEvents<
                                v1::FleetQuery::Service>>>>>>>;

class QueryService final : public RawFleetQueryService {
 public:
  // Not owned; all must outlive the service. `metrics` may be null.
  QueryService(const HostIndex* index, AlertStore* storage,
               ServerMetrics* metrics, QueryOptions options);

  // Errors: INVALID_ARGUMENT (a bad what-if, probe kind, plan or
  // selector).
  grpc::Status DoPredictAttach(const v1::PredictAttachRequest& req,
                               v1::PredictAttachResponse* resp) const;
  // INVALID_ARGUMENT for an empty host_id, NOT_FOUND for an unknown one.
  grpc::Status DoGetHost(const v1::GetHostRequest& req,
                         v1::HostState* resp) const;
  grpc::Status DoListHosts(const v1::ListHostsRequest& req,
                           v1::ListHostsResponse* resp) const;
  grpc::Status DoListAlerts(const v1::ListAlertsRequest& req,
                            v1::ListAlertsResponse* resp) const;
  grpc::Status DoFleetSummary(const v1::FleetSummaryRequest& req,
                              v1::FleetSummaryResponse* resp) const;
  // Errors: INVALID_ARGUMENT (no host id, from after to, a bad probe kind),
  // NOT_FOUND (unknown host), the store's.
  grpc::Status DoGetHostHistory(const v1::GetHostHistoryRequest& req,
                                v1::GetHostHistoryResponse* resp) const;
  // Errors: INVALID_ARGUMENT (from after to, limit over 10000, an unknown
  // predicted value), UNAVAILABLE (no event store, or its error).
  grpc::Status DoListEvents(const v1::ListEventsRequest& req,
                            v1::ListEventsResponse* resp) const;

  grpc::ServerUnaryReactor* PredictAttach(grpc::CallbackServerContext* ctx,
                                          const grpc::ByteBuffer* req,
                                          grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* GetHost(grpc::CallbackServerContext* ctx,
                                    const grpc::ByteBuffer* req,
                                    grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* ListHosts(grpc::CallbackServerContext* ctx,
                                      const grpc::ByteBuffer* req,
                                      grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* ListAlerts(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* req,
                                       grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* FleetSummary(grpc::CallbackServerContext* ctx,
                                         const grpc::ByteBuffer* req,
                                         grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* GetHostHistory(grpc::CallbackServerContext* ctx,
                                           const grpc::ByteBuffer* req,
                                           grpc::ByteBuffer* resp) override;
  grpc::ServerUnaryReactor* ListEvents(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* req,
                                       grpc::ByteBuffer* resp) override;

 private:
  // Authorizes, decodes `in` as a Request, runs `method` and encodes its
  // response into `out`, recording the call's metrics under `name`.
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* Handle(
      grpc::CallbackServerContext* ctx, const char* name,
      const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
      grpc::Status (QueryService::*method)(const Request&, Response*) const);
  // The bearer token and, when configured, the client certificate's name.
  grpc::Status Authorize(grpc::CallbackServerContext* ctx) const;
  grpc::Status AuthorizeClientName(grpc::CallbackServerContext* ctx) const;
  bool IsStale(const HostEntry& e, absl::Time now) const;
  v1::HostSummary Summarize(const std::string& host_id, const HostEntry& e,
                            v1::ProbeKind kind, absl::Time now) const;
  // Calls fn(worker, host_id, entry) for each host `sel` covers: the
  // explicit ids (unknown ones appended to `unknown` when given), filtered
  // by the labels when both are given; else every host matching the
  // labels. `fn` runs under an index shard lock. A fleet-wide scan spreads
  // the shards over `workers` threads (worker 0 is the caller's), each
  // calling `fn` with its index; explicit ids are visited by worker 0.
  using HostFn =
      std::function<void(int worker, const std::string&, const HostEntry&)>;
  grpc::Status Scan(const v1::HostSelector& sel,
                    google::protobuf::RepeatedPtrField<std::string>* unknown,
                    int workers, const HostFn& fn) const;
  // The stored report of (host, seq), parsed. Errors: no store
  // (UNAVAILABLE), the store's, DataLoss when it does not parse.
  absl::StatusOr<v1::HostReport> ReadReport(const std::string& host_id,
                                            uint64_t seq) const;
  // One PredictAttach answer for `host_id` with its prediction explained.
  void Answer(const std::string& host_id, const v1::PredictAttachRequest& req,
              std::optional<double> plan_budget, absl::Time now,
              v1::HostAttachAnswer* a) const;

  const HostIndex* const index_;
  AlertStore* const storage_;
  ServerMetrics* const metrics_;
  const QueryOptions options_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_QUERY_SERVICE_H_
