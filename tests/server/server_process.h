// Starts the real tracehealth-server binary for tests and benchmarks, on
// loopback port 0, and reads its addresses from the port file.
#ifndef TRACEHEALTH_TESTS_SERVER_SERVER_PROCESS_H_
#define TRACEHEALTH_TESTS_SERVER_SERVER_PROCESS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

struct ServerProcess {
  std::unique_ptr<Subprocess> process;
  std::string grpc_addr;     // 127.0.0.1:PORT
  std::string metrics_addr;  // 127.0.0.1:PORT
  std::string log_path;
};

struct ServerOptions {
  // gRPC address; a fixed port lets a test restart the server on it.
  std::string listen = "127.0.0.1:0";
  // Where stdout/stderr go (appended); default DATA_DIR/server.log.
  std::string log_path;
  std::vector<std::string> flags;
  // Put before the binary, e.g. {"prlimit", "--fsize=..."}.
  std::vector<std::string> prefix;
  // Default: the server in runfiles.
  std::string binary;
  absl::Duration ready_timeout = absl::Seconds(60);
};

// Starts the server with --data_dir=data_dir and waits for its port file.
// Errors: the start failure, or DeadlineExceeded with the server's log.
absl::StatusOr<ServerProcess> StartServerWith(const std::string& data_dir,
                                              const ServerOptions& options);

// StartServerWith() with default options plus `extra_flags` (and `binary`).
absl::StatusOr<ServerProcess> StartServer(
    const std::string& data_dir,
    const std::vector<std::string>& extra_flags = {},
    const std::string& binary = "");

// The "VmRSS:" line of /proc/PID/status ("VmRSS: unknown" when unreadable).
std::string VmRssLine(int pid);
// A "FIELD:" of /proc/PID/status in kB (VmRSS, VmHWM), -1 when unreadable.
int64_t StatusKb(int pid, const std::string& field);

// User + system CPU time `pid` has used so far (from /proc/PID/stat), in
// seconds; 0 when unreadable.
double ProcessCpuSeconds(int pid);
// CPU seconds (user + system) of each live thread of `pid`, summed by
// thread name.
std::map<std::string, double> ThreadCpuSeconds(int pid);

// GET http://addr/path over a plain socket; returns the body.
absl::StatusOr<std::string> HttpGet(const std::string& addr,
                                    const std::string& path);

// The value of the sample `series` (its name with labels as the exposition
// prints them, e.g. `x_total{result="a"}`) on addr's /metrics; 0 when the
// page has no such sample. Errors: the page cannot be fetched, the value
// does not parse.
absl::StatusOr<double> ScrapedValue(const std::string& addr,
                                    const std::string& series);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_SERVER_SERVER_PROCESS_H_
