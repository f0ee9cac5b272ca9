#include "server/http/router.h"

#include <algorithm>
#include <climits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/auth/bearer_token.h"

namespace tracehealth::server {

HttpResponse ErrorResponse(int status, const std::string& message, bool json) {
  HttpResponse r;
  r.status = status;
  r.headers.emplace_back("Cache-Control", "no-store");
  if (!json) {
    r.body = message + "\n";
    return r;
  }
  // The message as a JSON string, escaped by protobuf's JSON printer.
  google::protobuf::Value text;
  text.set_string_value(message);
  std::string quoted;
  (void)google::protobuf::util::MessageToJsonString(text, &quoted);
  r.body = absl::StrCat("{\"error\":{\"code\":", status,
                        ",\"message\":", quoted, "}}");
  r.content_type = "application/json";
  return r;
}

int Router::MatchLength(const std::string& pattern, const std::string& path) {
  if (absl::EndsWith(pattern, "/*")) {
    const size_t n = pattern.size() - 1;  // keeps the '/'
    if (path.size() > n && path.compare(0, n, pattern, 0, n) == 0) {
      return static_cast<int>(n);
    }
    return -1;
  }
  return pattern == path ? INT_MAX : -1;
}

HttpResponse Router::Serve(const HttpRequest& request) const {
  int best_len = -1;
  for (const Route& r : routes_)
    best_len = std::max(best_len, MatchLength(r.pattern, request.path));
  const Route* best = nullptr;
  std::vector<std::string> allowed;
  for (const Route& r : routes_) {
    if (best_len < 0 || MatchLength(r.pattern, request.path) != best_len)
      continue;
    allowed.push_back(r.method);
    if (best == nullptr || r.method == request.method) best = &r;
  }
  if (best == nullptr) return ErrorResponse(404, "not found", false);
  if (best->method != request.method) {
    HttpResponse r = ErrorResponse(405, "method not allowed", best->json);
    r.headers.emplace_back("Allow", absl::StrJoin(allowed, ", "));
    return r;
  }
  if (best->needs_token && !token_.empty()) {
    if (request.authorization.empty()) {
      HttpResponse r = ErrorResponse(401, "bearer token required", best->json);
      r.headers.emplace_back("WWW-Authenticate",
                             "Bearer realm=\"tracehealth\"");
      return r;
    }
    if (!BearerTokenMatches(request.authorization, token_)) {
      return ErrorResponse(403, "invalid bearer token", best->json);
    }
  }
  if (best_len == INT_MAX) return best->handler(request);
  HttpRequest routed = request;
  routed.path_rest = request.path.substr(static_cast<size_t>(best_len));
  return best->handler(routed);
}

}  // namespace tracehealth::server
