// Router: sends each HTTP request to the handler of its method and path,
// after the bearer-token check of routes that require one.
//
// Patterns are exact paths ("/metrics") or prefixes ending in "/*"
// ("/api/v1/hosts/*": any non-empty rest, given to the handler as
// HttpRequest::path_rest). An exact path wins over prefixes, a longer
// prefix over a shorter one. Answers of its own: 404 for an unknown path,
// 405 (with Allow) for a known path and another method, 401 (with
// WWW-Authenticate: Bearer) without a token, 403 with a wrong one. Errors of
// JSON routes are JSON: {"error":{"code":403,"message":"..."}}.
//
// Thread safety: add every route before serving; Serve is then thread-safe.
#ifndef TRACEHEALTH_SERVER_HTTP_ROUTER_H_
#define TRACEHEALTH_SERVER_HTTP_ROUTER_H_

#include <string>
#include <vector>

#include "server/http/http_message.h"
#include "server/http/http_server.h"

namespace tracehealth::server {

struct Route {
  std::string method;   // "GET", "POST"
  std::string pattern;  // see above
  // Requires "Authorization: Bearer TOKEN" when the router has a token.
  bool needs_token = false;
  // Errors as JSON (API routes) or text.
  bool json = false;
  HttpHandler handler;
};

// An error response in the route's format.
HttpResponse ErrorResponse(int status, const std::string& message, bool json);

class Router {
 public:
  // `token`: the bearer token routes that need one require; "" turns the
  // check off.
  explicit Router(std::string token) : token_(std::move(token)) {}

  void Add(Route route) { routes_.push_back(std::move(route)); }

  HttpResponse Serve(const HttpRequest& request) const;

 private:
  // Whether `pattern` matches `path`, and how well (longer is better);
  // -1 when it does not.
  static int MatchLength(const std::string& pattern, const std::string& path);

  const std::string token_;
  std::vector<Route> routes_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_HTTP_ROUTER_H_
