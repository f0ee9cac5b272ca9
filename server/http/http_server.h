// HttpServer: the server's HTTP port (/metrics, /api/v1, the fleet page),
// on GNU libmicrohttpd.
//
// Connections are served by a pool of threads, each with its own epoll set:
// an idle or slow connection costs a file descriptor and a little memory,
// never a thread, so hundreds of them do not delay a scrape. Every
// connection is closed after `idle_timeout` without traffic; a request
// body still arriving `request_timeout` after its headers gets 408; headers
// beyond `max_header_bytes` get 431 (libmicrohttpd answers "Request Header
// Fields Too Large"); a body beyond `max_request_bytes` gets 413. Past
// `max_connections`, new connections are closed at once.
//
// Thread safety: Start and Stop on one thread; `handler` runs on the pool's
// threads, several at a time, and must be thread-safe.
#ifndef TRACEHEALTH_SERVER_HTTP_HTTP_SERVER_H_
#define TRACEHEALTH_SERVER_HTTP_HTTP_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/http/http_message.h"

struct MHD_Daemon;

namespace tracehealth::server {

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  // HOST:PORT (a name, an IPv4 address or [IPv6]); port 0 picks a free one.
  std::string listen = "127.0.0.1:9464";
  int threads = 4;
  // Whole seconds (libmicrohttpd's unit), at least 1.
  absl::Duration idle_timeout = absl::Seconds(30);
  absl::Duration request_timeout = absl::Seconds(10);
  int max_connections = 1024;
  size_t max_request_bytes = 64 << 10;
  size_t max_header_bytes = 32 << 10;
  // PEM certificate (chain) and private key; both set: HTTPS only.
  std::string tls_cert_pem;
  std::string tls_key_pem;
};

class HttpServer {
 public:
  // Binds and starts serving. Errors: InvalidArgument for bad options
  // (listen address, timeouts, TLS without both parts, a certificate or
  // key GnuTLS cannot load), Unavailable when the address cannot be bound
  // (taken: port reuse is off).
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      HttpServerOptions options, HttpHandler handler);

  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Closes the listening socket and every connection; returns once no
  // handler runs. Idempotent.
  void Stop();

  // HOST:PORT with the port actually bound (HOST as given).
  const std::string& address() const { return address_; }

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::string address_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_HTTP_HTTP_SERVER_H_
