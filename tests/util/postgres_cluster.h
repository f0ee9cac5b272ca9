// A PostgreSQL 15 cluster of its own for a test: initdb into a fresh
// directory under /tmp, one postmaster on a unix socket in that directory
// (and on 127.0.0.1 when asked), stopped and removed afterwards.
//
// PostgreSQL refuses to run as root: when the test runs as root, initdb and
// postgres run as the `postgres` user (Debian's postgresql-common creates
// it) through setpriv, in a directory that user owns. The postmaster's
// process group is killed however the test ends (ProcessReaper).
//
// Thread safety: owned by one thread.
#ifndef TRACEHEALTH_TESTS_UTIL_POSTGRES_CLUSTER_H_
#define TRACEHEALTH_TESTS_UTIL_POSTGRES_CLUSTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/util/process_reaper.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

// Where Debian's postgresql-15 puts initdb, pg_ctl and postgres.
inline constexpr char kPostgresBin[] = "/usr/lib/postgresql/15/bin";

// The command prefix that runs a program as the postgres user when this
// process is root ({} otherwise).
std::vector<std::string> AsPostgresUser();

// Creates a directory under /tmp (mode 0700) owned by the postgres user
// when this process is root.
absl::StatusOr<std::string> MakePostgresDir(const std::string& prefix);

class PostgresCluster {
 public:
  struct Options {
    // Also listen on 127.0.0.1 (port picked free); else the unix socket
    // only.
    bool tcp = false;
    // Extra "name=value" server settings (postgres -c).
    std::vector<std::string> settings;
  };

  static absl::StatusOr<std::unique_ptr<PostgresCluster>> Start(
      const Options& options);
  static absl::StatusOr<std::unique_ptr<PostgresCluster>> Start() {
    return Start(Options());
  }
  ~PostgresCluster();  // Kill, then remove the directory
  PostgresCluster(const PostgresCluster&) = delete;
  PostgresCluster& operator=(const PostgresCluster&) = delete;

  // libpq DSN of `dbname` as the postgres superuser over the unix socket.
  std::string Dsn(const std::string& dbname = "postgres") const;
  // The same over TCP (Options::tcp).
  std::string TcpDsn(const std::string& dbname = "postgres") const;
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

  // A new empty database; returns its DSN.
  absl::StatusOr<std::string> CreateDatabase();
  // Runs `sql` in `dbname` as the superuser. Returns the rows, one a line,
  // columns separated by "|".
  absl::StatusOr<std::string> Sql(const std::string& dbname,
                                  const std::string& sql);

  // SIGKILL to the postmaster and every backend (a crash).
  void Kill();
  // Starts the postmaster again on the same directory and port (crash
  // recovery runs first) and waits until it accepts connections.
  absl::Status Restart();

 private:
  PostgresCluster() = default;
  absl::Status Launch();

  Options options_;
  std::string dir_;
  int port_ = 0;
  int databases_ = 0;
  std::unique_ptr<Subprocess> postmaster_;
  std::unique_ptr<ProcessReaper> reaper_;
  std::unique_ptr<ProcessReaper> dir_reaper_;
};

// Waits until a server at `dsn` accepts connections (PQping). Errors:
// DeadlineExceeded.
absl::Status WaitForPostgres(const std::string& dsn, absl::Duration timeout);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_POSTGRES_CLUSTER_H_
