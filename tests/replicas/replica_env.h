// What the replica tests share: PostgreSQL-backed tracehealth-server
// replicas, the seqs a host has in the database, and the exactly-once
// check over simulated agents.
#ifndef TRACEHEALTH_TESTS_REPLICAS_REPLICA_ENV_H_
#define TRACEHEALTH_TESTS_REPLICAS_REPLICA_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/reliability/processes.h"
#include "tests/replicas/sim_agent.h"

namespace tracehealth::testing {

// Starts a replica on `dsn` with its port file and log in a new directory.
absl::StatusOr<ServerRun> StartReplica(
    const std::string& name, const std::string& dsn,
    const std::vector<std::string>& extra_flags = {});

// The seqs of `host` stored whole or as heartbeats, ascending (libpq,
// `dsn`).
absl::StatusOr<std::vector<uint64_t>> PgStoredSeqs(const std::string& dsn,
                                                   const std::string& host);

// Hosts every query of `address` sees (ListHosts, up to 10000).
absl::StatusOr<std::vector<std::string>> ListedHosts(
    const std::string& address);

struct ExactlyOnce {
  uint64_t made = 0, acked = 0, held = 0, lost = 0, doubled = 0, unacked = 0;
  int streams = 0;
  std::string first_problem;  // "" when every made seq is held once
};
// Checks every agent's seqs 1..made in the database: each once.
ExactlyOnce CheckExactlyOnce(
    const std::string& dsn,
    const std::vector<std::unique_ptr<SimAgent>>& agents);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_REPLICAS_REPLICA_ENV_H_
