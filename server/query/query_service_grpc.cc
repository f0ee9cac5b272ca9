// The gRPC side of QueryService (query_service.h): each FleetQuery method
// takes the request's bytes, checks the caller (bearer token, client
// certificate name), decodes the request, runs its Do* method and encodes
// the answer, recording the call's metrics.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/escape.h"
#include "common/grpc_code_name.h"
#include "grpcpp/grpcpp.h"
#include "re2/re2.h"
#include "server/auth/bearer_token.h"
#include "server/query/query_service.h"

namespace tracehealth::server {

grpc::Status QueryService::AuthorizeClientName(
    grpc::CallbackServerContext* ctx) const {
  std::vector<std::string> names;
  std::shared_ptr<const grpc::AuthContext> auth = ctx->auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const char* prop :
         {"x509_common_name", "x509_subject_alternative_name"}) {
      for (const auto& v : auth->FindPropertyValues(prop)) {
        names.emplace_back(v.data(), v.size());
      }
    }
  }
  for (const std::string& name : names) {
    if (RE2::FullMatch(name, *options_.client_names)) return grpc::Status::OK;
  }
  if (names.empty()) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "the query API requires a client certificate whose "
                        "name --query_client_names allows");
  }
  std::vector<std::string> shown;
  for (const std::string& name : names) shown.push_back(EchoText(name));
  return grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED,
      absl::StrCat("client certificate (", absl::StrJoin(shown, ", "),
                   ") may not use the query API (--query_client_names)"));
}

grpc::Status QueryService::Authorize(grpc::CallbackServerContext* ctx) const {
  if (options_.client_names != nullptr) {
    grpc::Status st = AuthorizeClientName(ctx);
    if (!st.ok()) return st;
  }
  if (options_.token.empty()) return grpc::Status::OK;
  const auto& md = ctx->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "bearer token required");
  }
  if (!BearerTokenMatches(
          std::string_view(it->second.data(), it->second.size()),
          options_.token)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "invalid bearer token");
  }
  return grpc::Status::OK;
}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* QueryService::Handle(
    grpc::CallbackServerContext* ctx, const char* name,
    const grpc::ByteBuffer* in, grpc::ByteBuffer* out,
    grpc::Status (QueryService::*method)(const Request&, Response*) const) {
  absl::Time start = absl::Now();
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  grpc::Status st = Authorize(ctx);
  Request req;
  if (st.ok()) {
    grpc::ByteBuffer bytes(*in);  // Deserialize consumes its buffer
    if (!grpc::SerializationTraits<Request>::Deserialize(&bytes, &req).ok()) {
      st = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("request does not decode as a ",
                                     Request::descriptor()->full_name(), " (",
                                     in->Length(), " bytes)"));
    }
  }
  if (st.ok()) {
    Response resp;
    st = (this->*method)(req, &resp);
    bool own_buffer = false;
    if (st.ok()) {
      st = grpc::SerializationTraits<Response>::Serialize(resp, out,
                                                          &own_buffer);
    }
  }
  if (metrics_ != nullptr) {
    metrics_->ObserveQuery(name, GrpcCodeName(st.error_code()),
                           absl::ToDoubleSeconds(absl::Now() - start));
  }
  reactor->Finish(st);
  return reactor;
}

grpc::ServerUnaryReactor* QueryService::PredictAttach(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "PredictAttach", req, resp,
                &QueryService::DoPredictAttach);
}

grpc::ServerUnaryReactor* QueryService::GetHost(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "GetHost", req, resp, &QueryService::DoGetHost);
}

grpc::ServerUnaryReactor* QueryService::ListHosts(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "ListHosts", req, resp, &QueryService::DoListHosts);
}

grpc::ServerUnaryReactor* QueryService::ListAlerts(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "ListAlerts", req, resp, &QueryService::DoListAlerts);
}

grpc::ServerUnaryReactor* QueryService::GetHostHistory(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "GetHostHistory", req, resp,
                &QueryService::DoGetHostHistory);
}

grpc::ServerUnaryReactor* QueryService::ListEvents(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "ListEvents", req, resp, &QueryService::DoListEvents);
}

grpc::ServerUnaryReactor* QueryService::Accuracy(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "Accuracy", req, resp, &QueryService::DoAccuracy);
}

grpc::ServerUnaryReactor* QueryService::FleetSummary(
    grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* req,
    grpc::ByteBuffer* resp) {
  return Handle(ctx, "FleetSummary", req, resp, &QueryService::DoFleetSummary);
}

}  // namespace tracehealth::server
