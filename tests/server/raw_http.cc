#include "tests/server/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace tracehealth::testing {

std::string RawResponse::Header(const std::string& name) const {
  for (absl::string_view line : absl::StrSplit(headers, "\r\n")) {
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::EqualsIgnoreCase(line.substr(0, colon), name)) {
      return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
  }
  return "";
}

absl::StatusOr<int> ConnectTcp(const std::string& addr) {
  size_t colon = addr.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(addr.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(addr);
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return absl::ResourceExhaustedError(absl::StrCat("socket: errno ", errno));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, addr.substr(0, colon).c_str(), &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("connect ", addr, ": errno ", errno));
  }
  return fd;
}

absl::StatusOr<RawResponse> RawExchange(const std::string& addr,
                                        const std::string& request,
                                        absl::Duration timeout) {
  absl::StatusOr<int> fd = ConnectTcp(addr);
  if (!fd.ok()) return fd.status();
  const absl::Time deadline = absl::Now() + timeout;
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n =
        send(*fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer (413) before reading it all
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  char buf[65536];
  while (true) {
    int left =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left <= 0) {
      close(*fd);
      return absl::DeadlineExceededError(absl::StrCat(
          "no complete response within ", absl::FormatDuration(timeout)));
    }
    pollfd p{*fd, POLLIN, 0};
    if (poll(&p, 1, left) <= 0) continue;
    ssize_t n = read(*fd, buf, sizeof(buf));
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  close(*fd);
  size_t head_end = raw.find("\r\n\r\n");
  size_t line_end = raw.find("\r\n");
  RawResponse r;
  if (head_end == std::string::npos ||
      !absl::SimpleAtoi(raw.substr(9, 3), &r.status)) {
    return absl::InternalError(
        absl::StrCat("not an HTTP response: \"", raw, "\""));
  }
  r.headers = raw.substr(line_end + 2, head_end - line_end - 2);
  r.body = raw.substr(head_end + 4);
  return r;
}

std::string RequestText(
    const std::string& method, const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& headers,
    const std::string& body) {
  std::string text = absl::StrCat(
      method, " ", path, " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
  for (const auto& [k, v] : headers) absl::StrAppend(&text, k, ": ", v, "\r\n");
  if (!body.empty() || method == "POST") {
    absl::StrAppend(&text, "Content-Length: ", body.size(), "\r\n");
  }
  absl::StrAppend(&text, "\r\n", body);
  return text;
}

absl::StatusOr<RawResponse> Get(const std::string& addr,
                                const std::string& path,
                                const std::string& token) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  return RawExchange(addr, RequestText("GET", path, headers));
}

bool ClosedByPeer(int fd, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  char buf[4096];
  while (absl::Now() < deadline) {
    int left =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, std::max(left, 1)) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    // Data (an error response) may come before the close.
  }
  return false;
}

}  // namespace tracehealth::testing
