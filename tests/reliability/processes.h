// Starting the real server and agent binaries for fault tests, and reading
// what the server stored straight from its SQLite file.
//
// Thread safety: plain functions; a returned process is owned by the caller.
#ifndef TRACEHEALTH_TESTS_RELIABILITY_PROCESSES_H_
#define TRACEHEALTH_TESTS_RELIABILITY_PROCESSES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

struct ServerRun {
  std::unique_ptr<Subprocess> process;
  std::string grpc_address;  // 127.0.0.1:PORT
};

// Starts tracehealth-server on `listen` (127.0.0.1:0 or a fixed port, to
// restart on the same address) with its database in `data_dir`; output is
// appended to `log`. `prefix` is put before the binary (e.g. {"prlimit",
// "--fsize=..."}). Waits up to 60 s for the port file.
absl::StatusOr<ServerRun> StartServerAt(
    const std::string& data_dir, const std::string& listen,
    const std::string& log, const std::vector<std::string>& extra_flags = {},
    const std::vector<std::string>& prefix = {});

// Starts tracehealth-agent on the fixture host `fixture` (a directory of
// tests/fixtures/hosts) reporting to `server` every `interval`.
absl::StatusOr<std::unique_ptr<Subprocess>> StartAgent(
    const std::string& fixture, const std::string& server,
    const std::string& state_dir, const std::string& host_id,
    absl::Duration interval, const std::string& log,
    const std::vector<std::string>& extra_flags = {});

// The agent's last "stopped after N reports (seq A..B), K left" log line.
struct AgentRun {
  uint64_t reports = 0;
  uint64_t first = 0;
  uint64_t last = 0;
  uint64_t left = 0;
};
absl::StatusOr<AgentRun> ParseAgentLog(const std::string& log_text);

// Seqs stored for `host_id`, whole or as heartbeats, in receive order,
// read from the database file (read-only). Errors: the database cannot be
// opened or read.
absl::StatusOr<std::vector<uint64_t>> StoredSeqs(const std::string& db_path,
                                                 const std::string& host_id);

// Stored HostReport blob of (host_id, seq) (a heartbeat's rebuilt from its
// full report), or NotFound.
absl::StatusOr<std::string> StoredReport(const std::string& db_path,
                                         const std::string& host_id,
                                         uint64_t seq);

// Checks `seqs` are exactly first..last, each once, ascending. Returns an
// empty string when they are, else what is wrong (missing, duplicated or
// out-of-order seqs).
std::string CheckContiguous(const std::vector<uint64_t>& seqs, uint64_t first,
                            uint64_t last);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_RELIABILITY_PROCESSES_H_
