#include "server/http/http_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/server/raw_http.h"

namespace tracehealth::server {
namespace {

using ::tracehealth::testing::ClosedByPeer;
using ::tracehealth::testing::ConnectTcp;
using ::tracehealth::testing::RawExchange;
using ::tracehealth::testing::RequestText;

// Echoes what the handler saw.
HttpResponse Echo(const HttpRequest& r) {
  HttpResponse resp;
  resp.status = r.path == "/teapot" ? 418 : 200;
  resp.content_type = "text/x-echo";
  resp.headers.emplace_back("X-Seen", "yes");
  resp.body = absl::StrCat(r.method, " ", r.path, " auth=", r.authorization,
                           " body=", r.body.size());
  for (const auto& [k, v] : r.query)
    absl::StrAppend(&resp.body, " ", k, "=", v);
  return resp;
}

std::unique_ptr<HttpServer> StartEcho(HttpServerOptions o = {}) {
  o.listen = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::Start(o, Echo);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(HttpServerTest, HandsTheDecodedRequestToTheHandlerAndSendsItsResponse) {
  auto server = StartEcho();
  ASSERT_NE(server, nullptr);
  auto r = RawExchange(server->address(),
                       RequestText("GET", "/a%20b?x=1&sel=role%3Ddb&x=2",
                                   {{"Authorization", "Bearer t"}}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "GET /a b auth=Bearer t body=0 x=1 sel=role=db x=2");
  EXPECT_EQ(r->Header("Content-Type"), "text/x-echo");
  EXPECT_EQ(r->Header("X-Seen"), "yes");
  EXPECT_EQ(r->Header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(r->Header("X-Frame-Options"), "DENY");

  auto teapot = RawExchange(server->address(), RequestText("GET", "/teapot"));
  ASSERT_TRUE(teapot.ok());
  EXPECT_EQ(teapot->status, 418);

  // HEAD is served as GET, without the body.
  auto head = RawExchange(server->address(), RequestText("HEAD", "/x"));
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
}

TEST(HttpServerTest, BodiesUpToTheLimitPassAndLargerOnesGet413) {
  HttpServerOptions o;
  o.max_request_bytes = 1000;
  auto server = StartEcho(o);
  ASSERT_NE(server, nullptr);
  auto at = RawExchange(server->address(),
                        RequestText("POST", "/p", {}, std::string(1000, 'a')));
  ASSERT_TRUE(at.ok()) << at.status();
  EXPECT_EQ(at->status, 200);
  EXPECT_TRUE(absl::EndsWith(at->body, "body=1000")) << at->body;

  auto over = RawExchange(
      server->address(), RequestText("POST", "/p", {}, std::string(1001, 'a')));
  ASSERT_TRUE(over.ok()) << over.status();
  EXPECT_EQ(over->status, 413);

  // Chunked, without a declared length: 600 + 600 bytes.
  std::string chunked =
      "POST /p HTTP/1.1\r\nHost: t\r\nConnection: close\r\nTransfer-Encoding: "
      "chunked\r\n\r\n" +
      absl::StrCat("258\r\n", std::string(600, 'b'), "\r\n258\r\n",
                   std::string(600, 'b'), "\r\n0\r\n\r\n");
  auto chunks = RawExchange(server->address(), chunked);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  EXPECT_EQ(chunks->status, 413);
}

TEST(HttpServerTest, OversizedHeadersAreRefused) {
  HttpServerOptions o;
  o.max_header_bytes = 16 << 10;
  auto server = StartEcho(o);
  ASSERT_NE(server, nullptr);
  auto small =
      RawExchange(server->address(),
                  RequestText("GET", "/", {{"X-Pad", std::string(2000, 'p')}}));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->status, 200);
  auto big = RawExchange(
      server->address(),
      RequestText("GET", "/", {{"X-Pad", std::string(40000, 'p')}}));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_GE(big->status, 400);
  EXPECT_LT(big->status, 500);
}

TEST(HttpServerTest, AnIdleConnectionIsClosedAfterTheIdleTimeout) {
  HttpServerOptions o;
  o.idle_timeout = absl::Seconds(1);
  o.request_timeout = absl::Seconds(30);
  auto server = StartEcho(o);
  ASSERT_NE(server, nullptr);
  absl::StatusOr<int> fd = ConnectTcp(server->address());
  ASSERT_TRUE(fd.ok());
  // Still open well before the timeout, closed soon after it.
  EXPECT_FALSE(ClosedByPeer(*fd, absl::Milliseconds(400)));
  EXPECT_TRUE(ClosedByPeer(*fd, absl::Seconds(3)));
  close(*fd);
}

TEST(HttpServerTest, ARequestTrickledByteByByteIsCutAtTheRequestTimeout) {
  HttpServerOptions o;
  o.idle_timeout = absl::Seconds(30);  // traffic keeps it from being idle
  o.request_timeout = absl::Seconds(1);
  auto server = StartEcho(o);
  ASSERT_NE(server, nullptr);
  absl::StatusOr<int> fd = ConnectTcp(server->address());
  ASSERT_TRUE(fd.ok());
  const std::string partial = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  send(*fd, partial.data(), partial.size(), MSG_NOSIGNAL);
  const absl::Time start = absl::Now();
  bool closed = false;
  while (!closed && absl::Now() - start < absl::Seconds(5)) {
    send(*fd, "a", 1, MSG_NOSIGNAL);
    closed = ClosedByPeer(*fd, absl::Milliseconds(200));
  }
  EXPECT_TRUE(closed);
  // The sweeper looks every 250 ms: 1 s plus at most that, plus slack.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(900));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  close(*fd);
}

TEST(HttpServerTest, ATakenPortIsAnError) {
  auto first = StartEcho();
  ASSERT_NE(first, nullptr);
  HttpServerOptions o;
  o.listen = first->address();
  absl::StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start(o, Echo);
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), first->address()));
}

TEST(HttpServerTest, BadOptionsAreRefusedNamingWhat) {
  struct Case {
    std::function<void(HttpServerOptions&)> change;
    std::string message;
  } cases[] = {
      {[](auto& o) { o.listen = "nohostport"; }, "not HOST:PORT"},
      {[](auto& o) { o.listen = "127.0.0.1:99999"; }, "bad port"},
      {[](auto& o) { o.threads = 0; }, "at least 1"},
      {[](auto& o) { o.idle_timeout = absl::Milliseconds(500); },
       "idle timeout"},
      {[](auto& o) { o.tls_cert_pem = "x"; }, "both a certificate and a key"},
      {[](auto& o) {
         o.tls_cert_pem =
             "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
         o.tls_key_pem = "junk";
       },
       "TLS certificate and key"},
  };
  for (const Case& c : cases) {
    HttpServerOptions o;
    o.listen = "127.0.0.1:0";
    c.change(o);
    absl::StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::Start(o, Echo);
    EXPECT_FALSE(s.ok()) << c.message;
    EXPECT_TRUE(absl::StrContains(s.status().message(), c.message))
        << s.status();
  }
}

}  // namespace
}  // namespace tracehealth::server
