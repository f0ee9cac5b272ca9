// The JSON API under /api/v1: the FleetQuery methods over HTTP, with the
// protobuf JSON mapping of their messages (proto field names), answered by
// the same QueryService code as gRPC.
//
//   GET  /api/v1/summary           FleetSummaryRequest -> FleetSummaryResponse
//   GET  /api/v1/hosts             ListHostsRequest -> ListHostsResponse
//   GET  /api/v1/hosts/ID          GetHostRequest -> HostState
//   GET  /api/v1/hosts/ID/history  GetHostHistoryRequest ->
//                                  GetHostHistoryResponse
//   GET  /api/v1/alerts            ListAlertsRequest -> ListAlertsResponse
//   GET  /api/v1/events            ListEventsRequest -> ListEventsResponse
//   GET  /api/v1/accuracy          AccuracyRequest -> AccuracyResponse
//   POST /api/v1/predict           PredictAttachRequest (JSON body) ->
//                                  PredictAttachResponse
//   GET  /api/v1/predict           the same from query parameters
//   GET  /api/v1/rollout           PredictAttachRequest whose plan is
//   POST /api/v1/rollout           required (plan.max_latency=2s) ->
//                                  PredictAttachResponse with the plan,
//                                  matched_hosts and unknown_hosts, and no
//                                  answers (/api/v1/predict has those)
//
// GET requests take their message from the query string
// (server/web/query_params.h). Errors are {"error":{"code":HTTP,
// "message":...}} with the gRPC code mapped: INVALID_ARGUMENT 400,
// NOT_FOUND 404, UNAUTHENTICATED 401, PERMISSION_DENIED 403,
// RESOURCE_EXHAUSTED 429, UNAVAILABLE 503, others 500. Every route needs
// the bearer token when the router has one.
#ifndef TRACEHEALTH_SERVER_WEB_API_H_
#define TRACEHEALTH_SERVER_WEB_API_H_

#include "server/http/router.h"
#include "server/query/query_service.h"

namespace tracehealth::server {

// `query` is not owned and must outlive the router's use.
void AddApiRoutes(const QueryService* query, Router* router);

// The HTTP status of a gRPC status code.
int HttpStatusOf(grpc::StatusCode code);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_WEB_API_H_
