#include "tests/util/postgres_cluster.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "postgresql/libpq-fe.h"
#include "tests/util/ports.h"

namespace tracehealth::testing {
namespace {

// The state letter and parent pid of /proc/PID/stat ("PID (COMM) S PPID ..."),
// or false if the process is gone. COMM may hold spaces and parentheses, so
// the fields are read after the last ')'.
bool ReadStat(pid_t pid, char* state, pid_t* ppid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const size_t close = s.rfind(')');
  if (!in || close == std::string::npos) return false;
  std::istringstream rest(s.substr(close + 1));
  long parent = 0;
  if (!(rest >> *state >> parent)) return false;
  *ppid = static_cast<pid_t>(parent);
  return true;
}

// Every live process whose parent is `parent`.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    int pid = 0;
    if (!absl::SimpleAtoi(e.path().filename().string(), &pid)) continue;
    char state = 0;
    pid_t ppid = 0;
    if (ReadStat(pid, &state, &ppid) && ppid == parent) out.push_back(pid);
  }
  return out;
}

// Waits (up to `limit`) until `pid` is gone or a zombie: a process that can
// no longer answer a client or hold shared memory.
void WaitUntilDead(pid_t pid, absl::Duration limit) {
  const absl::Time deadline = absl::Now() + limit;
  char state = 0;
  pid_t ppid = 0;
  while (ReadStat(pid, &state, &ppid) && state != 'Z' && state != 'X' &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(2));
  }
}

}  // namespace

std::vector<std::string> AsPostgresUser() {
  if (geteuid() != 0) return {};
  // setpriv execs the program itself (runuser would stay as its parent), so
  // the pid a test holds is the program's.
  return {"/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres",
          "--init-groups", "--"};
}

absl::StatusOr<std::string> MakePostgresDir(const std::string& prefix) {
  // Not under TEST_TMPDIR: the postgres user may not be able to reach it.
  std::string tmpl = absl::StrCat("/tmp/", prefix, "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", tmpl, " failed"));
  }
  if (geteuid() == 0) {
    struct passwd* pw = getpwnam("postgres");
    if (pw == nullptr) {
      rmdir(tmpl.c_str());
      return absl::FailedPreconditionError(
          "no postgres user (install postgresql-15: deploy/setup.sh)");
    }
    if (chown(tmpl.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      rmdir(tmpl.c_str());
      return absl::InternalError(absl::StrCat("chown ", tmpl, " failed"));
    }
  }
  return tmpl;
}

absl::Status WaitForPostgres(const std::string& dsn, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const char* keys[] = {"dbname", nullptr};
  const char* values[] = {dsn.c_str(), nullptr};
  while (PQpingParams(keys, values, 1) != PQPING_OK) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("postgres at ", dsn, " not ready after ",
                       absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PostgresCluster>> PostgresCluster::Start(
    const Options& options) {
  std::unique_ptr<PostgresCluster> c(new PostgresCluster());
  c->options_ = options;
  absl::StatusOr<std::string> dir = MakePostgresDir("tracehealth-pg-");
  if (!dir.ok()) return dir.status();
  c->dir_ = *dir;
  c->port_ = options.tcp ? PickFreePort() : 5432;
  std::vector<std::string> initdb = AsPostgresUser();
  for (std::string a :
       {absl::StrCat(kPostgresBin, "/initdb"), std::string("-D"),
        c->dir_ + "/data", std::string("-U"), std::string("postgres"),
        std::string("-A"), std::string("trust"), std::string("--no-sync"),
        std::string("--no-locale"), std::string("-E"), std::string("UTF8")}) {
    initdb.push_back(std::move(a));
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> p =
      Subprocess::Start(initdb, c->dir_ + "/initdb.log");
  if (!p.ok()) return p.status();
  absl::StatusOr<int> rc = (*p)->Wait(absl::Seconds(60));
  if (!rc.ok() || *rc != 0) {
    absl::StatusOr<std::string> log = ReadFile(c->dir_ + "/initdb.log");
    return absl::InternalError(
        absl::StrCat("initdb failed: ", log.ok() ? *log : "(no log)"));
  }
  if (absl::Status st = c->Launch(); !st.ok()) return st;
  return c;
}

absl::Status PostgresCluster::Launch() {
  std::vector<std::string> argv = AsPostgresUser();
  for (std::string a :
       {absl::StrCat(kPostgresBin, "/postgres"), std::string("-D"),
        dir_ + "/data", std::string("-k"), dir_, std::string("-p"),
        absl::StrCat(port_), std::string("-c"),
        absl::StrCat("listen_addresses=", options_.tcp ? "127.0.0.1" : "")}) {
    argv.push_back(std::move(a));
  }
  for (const std::string& s : options_.settings) {
    argv.push_back("-c");
    argv.push_back(s);
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> p =
      Subprocess::Start(argv, dir_ + "/postgres.log");
  if (!p.ok()) return p.status();
  postmaster_ = *std::move(p);
  // The postmaster leads its own group (Subprocess); should the test die,
  // the reaper kills it and its backends exit on its death.
  reaper_ = std::make_unique<ProcessReaper>(postmaster_->pid(), "");
  if (dir_reaper_ == nullptr) {
    dir_reaper_ = std::make_unique<ProcessReaper>(postmaster_->pid(), dir_);
  }
  absl::Status st = WaitForPostgres(Dsn(), absl::Seconds(60));
  if (!st.ok()) {
    absl::StatusOr<std::string> log = ReadFile(dir_ + "/postgres.log");
    return absl::InternalError(
        absl::StrCat(st.message(), "; log: ", log.ok() ? *log : "(none)"));
  }
  return absl::OkStatus();
}

PostgresCluster::~PostgresCluster() {
  Kill();
  dir_reaper_.reset();  // removes the directory
}

std::string PostgresCluster::Dsn(const std::string& dbname) const {
  return absl::StrCat("host=", dir_, " port=", port_,
                      " user=postgres dbname=", dbname);
}

std::string PostgresCluster::TcpDsn(const std::string& dbname) const {
  return absl::StrCat("host=127.0.0.1 port=", port_,
                      " user=postgres dbname=", dbname);
}

absl::StatusOr<std::string> PostgresCluster::CreateDatabase() {
  const std::string name = absl::StrCat("t", ++databases_);
  absl::StatusOr<std::string> out =
      Sql("postgres", absl::StrCat("CREATE DATABASE ", name));
  if (!out.ok()) return out.status();
  return Dsn(name);
}

absl::StatusOr<std::string> PostgresCluster::Sql(const std::string& dbname,
                                                 const std::string& sql) {
  const std::string dsn = Dsn(dbname);
  const char* keys[] = {"dbname", nullptr};
  const char* values[] = {dsn.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, 1);
  std::string out;
  absl::Status st;
  if (PQstatus(conn) != CONNECTION_OK) {
    st = absl::UnavailableError(PQerrorMessage(conn));
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
      st =
          absl::InternalError(absl::StrCat(sql, ": ", PQresultErrorMessage(r)));
    } else {
      for (int i = 0; i < PQntuples(r); ++i) {
        std::vector<std::string> cols;
        for (int j = 0; j < PQnfields(r); ++j)
          cols.push_back(PQgetvalue(r, i, j));
        absl::StrAppend(&out, absl::StrJoin(cols, "|"), "\n");
      }
    }
    PQclear(r);
  }
  PQfinish(conn);
  if (!st.ok()) return st;
  return out;
}

void PostgresCluster::Kill() {
  if (postmaster_ == nullptr) return;
  // Every postmaster child calls setsid() (InitPostmasterChild), so the
  // backends are not in the postmaster's process group and a group kill
  // misses them: a backend would go on answering its client until it noticed
  // the postmaster's death. Stop the postmaster so it forks no more, kill
  // each child, then the postmaster, and wait until all are dead.
  const pid_t pid = postmaster_->pid();
  kill(pid, SIGSTOP);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  char state = 0;
  pid_t ppid = 0;
  while (ReadStat(pid, &state, &ppid) && state != 'T' &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  const std::vector<pid_t> children = ChildrenOf(pid);
  for (pid_t child : children) kill(child, SIGKILL);
  kill(-pid, SIGKILL);
  postmaster_->Kill();
  for (pid_t child : children) WaitUntilDead(child, absl::Seconds(10));
  postmaster_.reset();
  reaper_.reset();
}

absl::Status PostgresCluster::Restart() {
  Kill();
  return Launch();
}

}  // namespace tracehealth::testing
