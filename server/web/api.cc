#include "server/web/api.h"

#include <functional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/proto_json.h"
#include "google/protobuf/util/json_util.h"
#include "server/web/query_params.h"

namespace tracehealth::server {
namespace {

constexpr char kHistorySuffix[] = "/history";

HttpResponse Json(const google::protobuf::Message& msg) {
  ProtoJsonOptions opts;
  opts.print_defaults = true;
  HttpResponse r;
  r.content_type = "application/json";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.body = ProtoToJson(msg, opts).value_or("");
  return r;
}

HttpResponse Error(grpc::StatusCode code, const std::string& message) {
  return ErrorResponse(HttpStatusOf(code), message, true);
}

// Request from the query string (GET) or the JSON body (POST), the call,
// and its response or error.
template <typename Req, typename Resp>
HttpResponse Call(const HttpRequest& http, Req req,
                  const std::function<grpc::Status(const Req&, Resp*)>& fn) {
  if (http.method == "POST") {
    auto st = google::protobuf::util::JsonStringToMessage(http.body, &req);
    if (!st.ok()) {
      return Error(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("bad request body: ", st.message().as_string()));
    }
  } else {
    // Fields the path set (the host id) win over the query string's.
    Req from_query;
    absl::Status st = ParseQueryParams(http.query, &from_query);
    if (!st.ok())
      return Error(grpc::StatusCode::INVALID_ARGUMENT,
                   std::string(st.message()));
    from_query.MergeFrom(req);
    req = std::move(from_query);
  }
  Resp resp;
  grpc::Status st = fn(req, &resp);
  if (!st.ok()) return Error(st.error_code(), st.error_message());
  return Json(resp);
}

}  // namespace

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    default:
      return 500;
  }
}

void AddApiRoutes(const QueryService* q, Router* router) {
  auto add = [router](const char* method, const char* pattern, HttpHandler h) {
    router->Add(
        {method, pattern, /*needs_token=*/true, /*json=*/true, std::move(h)});
  };
  add("GET", "/api/v1/summary", [q](const HttpRequest& r) {
    return Call<v1::FleetSummaryRequest, v1::FleetSummaryResponse>(
        r, {}, [q](const auto& req, auto* resp) {
          return q->DoFleetSummary(req, resp);
        });
  });
  add("GET", "/api/v1/hosts", [q](const HttpRequest& r) {
    return Call<v1::ListHostsRequest, v1::ListHostsResponse>(
        r, {},
        [q](const auto& req, auto* resp) { return q->DoListHosts(req, resp); });
  });
  add("GET", "/api/v1/hosts/*", [q](const HttpRequest& r) {
    if (absl::EndsWith(r.path_rest, kHistorySuffix)) {
      v1::GetHostHistoryRequest req;
      req.set_host_id(
          r.path_rest.substr(0, r.path_rest.size() - strlen(kHistorySuffix)));
      return Call<v1::GetHostHistoryRequest, v1::GetHostHistoryResponse>(
          r, req, [q](const auto& rq, auto* resp) {
            return q->DoGetHostHistory(rq, resp);
          });
    }
    v1::GetHostRequest req;
    req.set_host_id(r.path_rest);
    return Call<v1::GetHostRequest, v1::HostState>(
        r, req,
        [q](const auto& rq, auto* resp) { return q->DoGetHost(rq, resp); });
  });
  add("GET", "/api/v1/alerts", [q](const HttpRequest& r) {
    return Call<v1::ListAlertsRequest, v1::ListAlertsResponse>(
        r, {}, [q](const auto& req, auto* resp) {
          return q->DoListAlerts(req, resp);
        });
  });
  add("GET", "/api/v1/events", [q](const HttpRequest& r) {
    return Call<v1::ListEventsRequest, v1::ListEventsResponse>(
        r, {}, [q](const auto& req, auto* resp) {
          return q->DoListEvents(req, resp);
        });
  });
  add("GET", "/api/v1/accuracy", [q](const HttpRequest& r) {
    return Call<v1::AccuracyRequest, v1::AccuracyResponse>(
        r, {},
        [q](const auto& req, auto* resp) { return q->DoAccuracy(req, resp); });
  });
  HttpHandler predict = [q](const HttpRequest& r) {
    return Call<v1::PredictAttachRequest, v1::PredictAttachResponse>(
        r, {}, [q](const auto& req, auto* resp) {
          return q->DoPredictAttach(req, resp);
        });
  };
  add("POST", "/api/v1/predict", predict);
  add("GET", "/api/v1/predict", predict);
  // PredictAttach with a plan: the plan is required (an absent one is
  // refused as one without max_latency), and the answers are left out.
  HttpHandler rollout = [q](const HttpRequest& r) {
    return Call<v1::PredictAttachRequest, v1::PredictAttachResponse>(
        r, {}, [q](const auto& req, auto* resp) {
          v1::PredictAttachRequest planned = req;
          planned.mutable_plan();
          planned.set_limit(1);
          grpc::Status st = q->DoPredictAttach(planned, resp);
          resp->clear_answers();
          return st;
        });
  };
  add("POST", "/api/v1/rollout", rollout);
  add("GET", "/api/v1/rollout", rollout);
}

}  // namespace tracehealth::server
