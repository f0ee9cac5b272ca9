#include "tests/server/server_process.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tracehealth::testing {

absl::StatusOr<ServerProcess> StartServerWith(const std::string& data_dir,
                                              const ServerOptions& options) {
  ServerProcess sp;
  const std::string port_file = NewTempDir("ports") + "/ports";
  sp.log_path = options.log_path.empty() ? absl::StrCat(data_dir, "/server.log")
                                         : options.log_path;
  std::vector<std::string> argv = options.prefix;
  argv.insert(
      argv.end(),
      {options.binary.empty() ? Runfile("server/tracehealth-server")
                              : options.binary,
       absl::StrCat("--listen=", options.listen),
       "--metrics_listen=127.0.0.1:0", absl::StrCat("--data_dir=", data_dir),
       absl::StrCat("--port_file=", port_file)});
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  auto p = Subprocess::Start(argv, sp.log_path);
  if (!p.ok()) return p.status();
  sp.process = std::move(*p);
  absl::StatusOr<std::string> ports =
      WaitForFile(port_file, options.ready_timeout);
  if (!ports.ok()) {
    auto log = ReadFile(sp.log_path);
    return absl::DeadlineExceededError(
        absl::StrCat("server did not start: ", log.ok() ? *log : ""));
  }
  for (absl::string_view line :
       absl::StrSplit(*ports, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "grpc="))
      sp.grpc_addr = std::string(line.substr(5));
    if (absl::StartsWith(line, "metrics="))
      sp.metrics_addr = std::string(line.substr(8));
  }
  if (sp.grpc_addr.empty() || sp.metrics_addr.empty()) {
    return absl::InternalError(absl::StrCat("bad port file: ", *ports));
  }
  return sp;
}

absl::StatusOr<ServerProcess> StartServer(
    const std::string& data_dir, const std::vector<std::string>& extra_flags,
    const std::string& binary) {
  ServerOptions options;
  options.flags = extra_flags;
  options.binary = binary;
  return StartServerWith(data_dir, options);
}

std::string VmRssLine(int pid) {
  absl::StatusOr<std::string> status =
      ReadFile(absl::StrCat("/proc/", pid, "/status"));
  if (status.ok()) {
    size_t at = status->find("VmRSS:");
    if (at != std::string::npos)
      return status->substr(at, status->find('\n', at) - at);
  }
  return "VmRSS: unknown";
}

int64_t StatusKb(int pid, const std::string& field) {
  absl::StatusOr<std::string> status =
      ReadFile(absl::StrCat("/proc/", pid, "/status"));
  if (!status.ok()) return -1;
  size_t at = status->find(field + ":");
  if (at == std::string::npos) return -1;
  return std::strtoll(status->c_str() + at + field.size() + 1, nullptr, 10);
}

namespace {

double StatCpuSeconds(const std::string& stat_path) {
  absl::StatusOr<std::string> stat = ReadFile(stat_path);
  if (!stat.ok()) return 0;
  // Fields after the parenthesised command name; utime and stime are the
  // 14th and 15th fields of the whole line.
  size_t close = stat->rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> f = absl::StrSplit(stat->substr(close + 2), ' ');
  int64_t utime = 0, stime = 0;
  if (f.size() < 13 || !absl::SimpleAtoi(f[11], &utime) ||
      !absl::SimpleAtoi(f[12], &stime)) {
    return 0;
  }
  return static_cast<double>(utime + stime) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

double ProcessCpuSeconds(int pid) {
  return StatCpuSeconds(absl::StrCat("/proc/", pid, "/stat"));
}

std::map<std::string, double> ThreadCpuSeconds(int pid) {
  std::map<std::string, double> out;
  const std::string task = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(task.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    absl::StatusOr<std::string> name =
        ReadFile(absl::StrCat(task, "/", e->d_name, "/comm"));
    if (!name.ok()) continue;
    out[std::string(absl::StripTrailingAsciiWhitespace(*name))] +=
        StatCpuSeconds(absl::StrCat(task, "/", e->d_name, "/stat"));
  }
  closedir(dir);
  return out;
}

absl::StatusOr<std::string> HttpGet(const std::string& addr,
                                    const std::string& path) {
  size_t colon = addr.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(addr.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(addr);
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, addr.substr(0, colon).c_str(), &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect ", addr));
  }
  std::string req =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", addr, "\r\n\r\n");
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return absl::UnavailableError("write");
  }
  std::string resp;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) resp.append(buf, n);
  close(fd);
  size_t body = resp.find("\r\n\r\n");
  if (body == std::string::npos) return absl::InternalError("no HTTP body");
  return resp.substr(body + 4);
}

absl::StatusOr<double> ScrapedValue(const std::string& addr,
                                    const std::string& series) {
  absl::StatusOr<std::string> page = HttpGet(addr, "/metrics");
  if (!page.ok()) return page.status();
  const std::string prefix = series + " ";
  for (absl::string_view line : absl::StrSplit(*page, '\n')) {
    if (!absl::StartsWith(line, prefix)) continue;
    double v = 0;
    if (!absl::SimpleAtod(line.substr(prefix.size()), &v)) {
      return absl::DataLossError(absl::StrCat("bad sample: ", line));
    }
    return v;
  }
  return 0.0;
}

}  // namespace tracehealth::testing
