#include "server/http/http_server.h"

#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace tracehealth::server {
namespace {

// Headers every response carries: no MIME sniffing, no framing, no referrer.
constexpr std::pair<const char*, const char*> kCommonHeaders[] = {
    {"X-Content-Type-Options", "nosniff"},
    {"X-Frame-Options", "DENY"},
    {"Referrer-Policy", "no-referrer"},
};

// HOST and PORT of "HOST:PORT" or "[V6]:PORT".
absl::Status SplitHostPort(const std::string& addr, std::string* host,
                           std::string* port) {
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon + 1 == addr.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", addr, "\" is not HOST:PORT"));
  }
  *host = addr.substr(0, colon);
  *port = addr.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  int p = 0;
  if (!absl::SimpleAtoi(*port, &p) || p < 0 || p > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", addr, "\": bad port"));
  }
  return absl::OkStatus();
}

// A listening, non-blocking socket on `addr` without SO_REUSEPORT (a
// second server must not share the port), and the port bound.
absl::StatusOr<int> Listen(const std::string& addr, int* bound_port) {
  std::string host, port;
  absl::Status st = SplitHostPort(addr, &host, &port);
  if (!st.ok()) return st;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int gai = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(),
                        &hints, &res);
  if (gai != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", addr, "\": ", gai_strerror(gai)));
  }
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    // Lets a restarted server bind while old connections sit in TIME_WAIT;
    // unlike SO_REUSEPORT it does not let two listeners share the port.
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 512) != 0) {
      why = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", addr, ": ", why));
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  *bound_port = ntohs(ss.ss_family == AF_INET6
                          ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                          : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return fd;
}

enum MHD_Result AddPair(void* cls, enum MHD_ValueKind, const char* key,
                        const char* value) {
  auto* out =
      static_cast<std::vector<std::pair<std::string, std::string>>*>(cls);
  out->emplace_back(key, value == nullptr ? "" : value);
  return MHD_YES;
}

}  // namespace

struct HttpServer::Impl {
  // One request between its headers and its response.
  struct Request {
    absl::Time started;
    size_t declared_bytes = 0;
    std::string body;
    bool too_large = false;
  };
  // A connection while it waits for a complete request.
  struct Conn {
    int fd = -1;  // a dup of the connection's socket, closed with it
    absl::Time deadline = absl::InfiniteFuture();
    bool shut = false;
  };

  HttpServerOptions options;
  HttpHandler handler;
  MHD_Daemon* daemon = nullptr;

  absl::Mutex mu;
  absl::flat_hash_map<MHD_Connection*, Conn> conns ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;
  std::thread sweeper;

  void Sweep() {
    absl::MutexLock lock(&mu);
    while (!stopping) {
      mu.AwaitWithTimeout(absl::Condition(&stopping), absl::Milliseconds(250));
      const absl::Time now = absl::Now();
      for (auto& [c, conn] : conns) {
        // The dup keeps the socket alive until the connection's close
        // notification, so the descriptor cannot belong to another one.
        if (!conn.shut && now > conn.deadline) {
          shutdown(conn.fd, SHUT_RDWR);
          conn.shut = true;
        }
      }
    }
  }

  static void OnConnection(void* cls, MHD_Connection* c, void** socket_ctx,
                           enum MHD_ConnectionNotificationCode toe) {
    auto* self = static_cast<Impl*>(cls);
    absl::MutexLock lock(&self->mu);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo* info =
          MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
      Conn conn;
      conn.fd =
          info == nullptr ? -1 : fcntl(info->connect_fd, F_DUPFD_CLOEXEC, 0);
      conn.deadline = absl::Now() + self->options.request_timeout;
      if (conn.fd >= 0) self->conns[c] = conn;
    } else {
      auto it = self->conns.find(c);
      if (it != self->conns.end()) {
        close(it->second.fd);
        self->conns.erase(it);
      }
    }
  }

  // A request's headers arrived: its connection waits no more.
  void RequestStarted(MHD_Connection* c) {
    absl::MutexLock lock(&mu);
    auto it = conns.find(c);
    if (it != conns.end()) it->second.deadline = absl::InfiniteFuture();
  }

  static void OnCompleted(void* cls, MHD_Connection* c, void** req_ctx,
                          enum MHD_RequestTerminationCode) {
    auto* self = static_cast<Impl*>(cls);
    delete static_cast<Request*>(*req_ctx);
    *req_ctx = nullptr;
    // The next request on this connection (keep-alive) has its own time.
    absl::MutexLock lock(&self->mu);
    auto it = self->conns.find(c);
    if (it != self->conns.end()) {
      it->second.deadline = absl::Now() + self->options.request_timeout;
    }
  }

  static enum MHD_Result Send(MHD_Connection* c, const HttpResponse& r) {
    MHD_Response* resp = MHD_create_response_from_buffer(
        r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
    if (resp == nullptr) return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", r.content_type.c_str());
    for (const auto& [k, v] : kCommonHeaders)
      MHD_add_response_header(resp, k, v);
    for (const auto& [k, v] : r.headers) {
      MHD_add_response_header(resp, k.c_str(), v.c_str());
    }
    enum MHD_Result ok =
        MHD_queue_response(c, static_cast<unsigned>(r.status), resp);
    MHD_destroy_response(resp);
    return ok;
  }

  static enum MHD_Result OnAccess(void* cls, MHD_Connection* c, const char* url,
                                  const char* method, const char* version,
                                  const char* upload, size_t* upload_size,
                                  void** req_ctx) {
    auto* self = static_cast<Impl*>(cls);
    auto* req = static_cast<Request*>(*req_ctx);
    if (req == nullptr) {
      self->RequestStarted(c);
      req = new Request;
      req->started = absl::Now();
      *req_ctx = req;
      const char* cl =
          MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
      uint64_t declared = 0;
      if (cl != nullptr && absl::SimpleAtoi(cl, &declared) &&
          declared > self->options.max_request_bytes) {
        return Send(c, HttpResponse::Text(413, "request body too large\n"));
      }
      return MHD_YES;
    }
    if (*upload_size > 0) {
      if (absl::Now() - req->started > self->options.request_timeout) {
        *upload_size = 0;
        return Send(c, HttpResponse::Text(408, "request body too slow\n"));
      }
      if (req->body.size() + *upload_size > self->options.max_request_bytes) {
        req->too_large = true;  // the rest is read and dropped
      } else {
        req->body.append(upload, *upload_size);
      }
      *upload_size = 0;
      return MHD_YES;
    }
    if (req->too_large) {
      return Send(c, HttpResponse::Text(413, "request body too large\n"));
    }
    HttpRequest hr;
    hr.method = method;
    if (hr.method == "HEAD") hr.method = "GET";  // libmicrohttpd drops the body
    hr.path = url;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, &AddPair, &hr.query);
    const char* auth =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (auth != nullptr) hr.authorization = auth;
    hr.body = std::move(req->body);
    return Send(c, self->handler(hr));
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    HttpServerOptions options, HttpHandler handler) {
  if (options.threads < 1 || options.max_connections < 1) {
    return absl::InvalidArgumentError(
        "HTTP threads and connections must be at least 1");
  }
  if (options.idle_timeout < absl::Seconds(1) ||
      options.request_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "HTTP idle timeout must be at least 1s, the request timeout above 0");
  }
  const bool tls =
      !options.tls_cert_pem.empty() || !options.tls_key_pem.empty();
  if (tls && (options.tls_cert_pem.empty() || options.tls_key_pem.empty())) {
    return absl::InvalidArgumentError(
        "HTTP TLS needs both a certificate and a key");
  }
  if (tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
    return absl::InvalidArgumentError("this libmicrohttpd has no TLS support");
  }
  int port = 0;
  absl::StatusOr<int> fd = Listen(options.listen, &port);
  if (!fd.ok()) return fd.status();

  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->handler = std::move(handler);
  const HttpServerOptions& o = impl->options;
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
  if (tls) flags |= MHD_USE_TLS;
  // Option list without TLS entries when TLS is off (libmicrohttpd rejects
  // certificate options on a plain daemon).
  MHD_OptionItem opts[] = {
      {MHD_OPTION_LISTEN_SOCKET, *fd, nullptr},
      {MHD_OPTION_THREAD_POOL_SIZE, o.threads, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT,
       static_cast<intptr_t>(absl::ToInt64Seconds(o.idle_timeout)), nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, o.max_connections, nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT,
       static_cast<intptr_t>(o.max_header_bytes), nullptr},
      {MHD_OPTION_NOTIFY_COMPLETED,
       reinterpret_cast<intptr_t>(&Impl::OnCompleted), impl.get()},
      {MHD_OPTION_NOTIFY_CONNECTION,
       reinterpret_cast<intptr_t>(&Impl::OnConnection), impl.get()},
      {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0,
       const_cast<char*>(o.tls_cert_pem.c_str())},
      {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0,
       const_cast<char*>(o.tls_key_pem.c_str())},
      {MHD_OPTION_END, 0, nullptr},
  };
  impl->daemon =
      MHD_start_daemon(flags, 0, nullptr, nullptr, &Impl::OnAccess, impl.get(),
                       MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
  if (impl->daemon == nullptr) {
    close(*fd);
    return absl::InvalidArgumentError(
        absl::StrCat("cannot start the HTTP server on ", o.listen,
                     tls ? " (check the TLS certificate and key)" : ""));
  }
  impl->sweeper = std::thread([p = impl.get()] { p->Sweep(); });
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(impl)));
  std::string host, unused_port;
  (void)SplitHostPort(server->impl_->options.listen, &host, &unused_port);
  server->address_ = host.find(':') != std::string::npos
                         ? absl::StrCat("[", host, "]:", port)
                         : absl::StrCat(host, ":", port);
  return server;
}

void HttpServer::Stop() {
  if (impl_ == nullptr || impl_->daemon == nullptr) return;
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->stopping = true;
  }
  impl_->sweeper.join();
  // Closes the listening socket and every connection (their close
  // notifications close the dups), after running handlers return.
  MHD_stop_daemon(impl_->daemon);
  impl_->daemon = nullptr;
}

}  // namespace tracehealth::server
