// HttpRequest and HttpResponse: one HTTP exchange as the server's handlers
// see it (server/http/http_server.h reads and writes the wire).
#ifndef TRACEHEALTH_SERVER_HTTP_HTTP_MESSAGE_H_
#define TRACEHEALTH_SERVER_HTTP_HTTP_MESSAGE_H_

#include <string>
#include <utility>
#include <vector>

namespace tracehealth::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ... ("HEAD" is served as "GET")
  // The path, percent-decoded, without the query string ("/hosts/db 1").
  std::string path;
  // Decoded query arguments in the order sent (a key may repeat).
  std::vector<std::pair<std::string, std::string>> query;
  // The Authorization header ("" when absent).
  std::string authorization;
  std::string body;
  // Set by Router for a "/prefix/*" route: what follows "/prefix/".
  std::string path_rest;

  // The first value of query argument `key`, or nullptr.
  const std::string* Query(const std::string& key) const {
    for (const auto& [k, v] : query) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Extra headers, e.g. {"Cache-Control", "no-store"}.
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse Text(int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
  }
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_HTTP_HTTP_MESSAGE_H_
