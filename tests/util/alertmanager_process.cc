#include "tests/util/alertmanager_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tracehealth::testing {
namespace {

constexpr char kBinary[] = "/usr/bin/prometheus-alertmanager";

// GET http://127.0.0.1:port/path with HTTP/1.0 (read to the end); returns
// the status line's code and the body.
absl::StatusOr<std::pair<int, std::string>> Get(int port,
                                                const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket");
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect 127.0.0.1:", port));
  }
  const std::string req =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return absl::UnavailableError("write");
  }
  std::string resp;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) resp.append(buf, n);
  close(fd);
  const size_t body = resp.find("\r\n\r\n");
  const size_t sp = resp.find(' ');
  if (body == std::string::npos || sp == std::string::npos)
    return absl::UnavailableError("no HTTP response");
  return std::make_pair(std::atoi(resp.c_str() + sp + 1),
                        resp.substr(body + 4));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Subprocess>> StartAlertmanager(
    const std::string& dir, int port, absl::Duration ready_timeout) {
  std::filesystem::create_directories(dir);
  const std::string config = dir + "/alertmanager.yml";
  {
    FILE* f = std::fopen(config.c_str(), "w");
    if (f == nullptr) return absl::InternalError("cannot write " + config);
    std::fputs(
        "route:\n  receiver: r\n  group_by: [alertname]\n  group_wait: 1s\n"
        "receivers:\n  - name: r\n",
        f);
    std::fclose(f);
  }
  const std::string log = dir + "/alertmanager.log";
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(
      {kBinary, "--config.file=" + config, "--storage.path=" + dir,
       absl::StrCat("--web.listen-address=127.0.0.1:", port),
       "--cluster.listen-address="},
      log);
  if (!p.ok()) return p.status();
  const absl::Time deadline = absl::Now() + ready_timeout;
  while (absl::Now() < deadline) {
    absl::StatusOr<std::pair<int, std::string>> r = Get(port, "/-/ready");
    if (r.ok() && r->first == 200) return p;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("Alertmanager not ready on port ", port, "; see ", log));
}

absl::StatusOr<std::map<std::pair<std::string, std::string>, int>> ActiveAlerts(
    int port) {
  absl::StatusOr<std::pair<int, std::string>> r =
      Get(port, "/api/v2/alerts?active=true&unprocessed=false");
  if (!r.ok()) return r.status();
  if (r->first != 200)
    return absl::UnavailableError(absl::StrCat("HTTP ", r->first));
  const std::string& body = r->second;
  if (body.empty() || body[0] != '[')
    return absl::InternalError("not a JSON list");
  // Alertmanager (Go) writes each alert's labels as one flat object with
  // sorted keys; read alertname and host from each (a scan: a JSON parser
  // takes seconds at 100,000 alerts).
  auto value = [](absl::string_view object, absl::string_view key) {
    const std::string k = absl::StrCat("\"", key, "\":\"");
    const size_t p = object.find(k);
    if (p == absl::string_view::npos) return std::string();
    const size_t b = p + k.size();
    return std::string(object.substr(b, object.find('"', b) - b));
  };
  std::map<std::pair<std::string, std::string>, int> out;
  constexpr char kLabels[] = "\"labels\":{";
  for (size_t p = body.find(kLabels); p != std::string::npos;
       p = body.find(kLabels, p + 1)) {
    const size_t end = body.find('}', p);
    if (end == std::string::npos) return absl::InternalError("cut short");
    const absl::string_view labels = absl::string_view(body).substr(p, end - p);
    out[{value(labels, "alertname"), value(labels, "host")}]++;
  }
  return out;
}

}  // namespace tracehealth::testing
