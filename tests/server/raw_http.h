// A plain-socket HTTP/1.1 client for tests of the server's HTTP port: whole
// exchanges with status and headers, and single sockets left idle or with a
// request half sent.
#ifndef TRACEHEALTH_TESTS_SERVER_RAW_HTTP_H_
#define TRACEHEALTH_TESTS_SERVER_RAW_HTTP_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tracehealth::testing {

struct RawResponse {
  int status = 0;
  std::string headers;  // the header block, CRLF-separated, without status line
  std::string body;
  // The value of header `name` (case-insensitive), "" when absent.
  std::string Header(const std::string& name) const;
};

// Connects to HOST:PORT (IPv4); the descriptor is the caller's to close.
absl::StatusOr<int> ConnectTcp(const std::string& addr);

// Sends `request` (the whole text) on a new connection and reads the
// response until the server closes it or `timeout` passes.
absl::StatusOr<RawResponse> RawExchange(
    const std::string& addr, const std::string& request,
    absl::Duration timeout = absl::Seconds(10));

// A request text with "Connection: close": METHOD PATH, extra headers, body
// (Content-Length added when non-empty or for POST).
std::string RequestText(
    const std::string& method, const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& headers = {},
    const std::string& body = "");

// GET `path` with an optional "Authorization: Bearer TOKEN".
absl::StatusOr<RawResponse> Get(const std::string& addr,
                                const std::string& path,
                                const std::string& token = "");

// Whether the peer closed `fd` (EOF or reset) within `timeout`.
bool ClosedByPeer(int fd, absl::Duration timeout);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_SERVER_RAW_HTTP_H_
