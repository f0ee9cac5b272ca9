// Starts the real tracehealth-server binary for tests and benchmarks, on
// loopback port 0, and reads its addresses from the port file.
#ifndef TRACEHEALTH_TESTS_SERVER_SERVER_PROCESS_H_
#define TRACEHEALTH_TESTS_SERVER_SERVER_PROCESS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

struct ServerProcess {
  std::unique_ptr<Subprocess> process;
  std::string grpc_addr;     // 127.0.0.1:PORT
  std::string metrics_addr;  // 127.0.0.1:PORT
  std::string log_path;
};

// Starts `binary` (default: the server in runfiles) with --data_dir=data_dir
// plus `extra_flags`; waits up to 30 s for its port file.
absl::StatusOr<ServerProcess> StartServer(const std::string& data_dir,
                                          const std::vector<std::string>& extra_flags = {},
                                          const std::string& binary = "");

// GET http://addr/path over a plain socket; returns the body.
absl::StatusOr<std::string> HttpGet(const std::string& addr, const std::string& path);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_SERVER_SERVER_PROCESS_H_
