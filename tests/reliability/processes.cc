#include "tests/reliability/processes.h"

#include <sqlite3.h>

#include <cstdio>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/server/server_process.h"
#include "tests/util/stored_reports.h"

namespace tracehealth::testing {

absl::StatusOr<ServerRun> StartServerAt(
    const std::string& data_dir, const std::string& listen,
    const std::string& log, const std::vector<std::string>& extra_flags,
    const std::vector<std::string>& prefix) {
  ServerOptions options;
  options.listen = listen;
  options.log_path = log;
  options.flags = extra_flags;
  options.prefix = prefix;
  absl::StatusOr<ServerProcess> sp = StartServerWith(data_dir, options);
  if (!sp.ok()) return sp.status();
  ServerRun run;
  run.process = std::move(sp->process);
  run.grpc_address = sp->grpc_addr;
  return run;
}

absl::StatusOr<std::unique_ptr<Subprocess>> StartAgent(
    const std::string& fixture, const std::string& server,
    const std::string& state_dir, const std::string& host_id,
    absl::Duration interval, const std::string& log,
    const std::vector<std::string>& extra_flags) {
  std::vector<std::string> argv = {
      Runfile("agent/tracehealth-agent"),
      "--root=" + Runfile("tests/fixtures/hosts/" + fixture),
      "--state_dir=" + state_dir,
      "--host_id=" + host_id,
      "--labels=role=reliability",
      "--server=" + server,
      "--interval=" + absl::FormatDuration(interval)};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  return Subprocess::Start(argv, log);
}

absl::StatusOr<AgentRun> ParseAgentLog(const std::string& log_text) {
  const size_t p = log_text.rfind("stopped after ");
  if (p == std::string::npos)
    return absl::NotFoundError("no \"stopped after\" line");
  AgentRun run;
  unsigned long long n = 0, a = 0, b = 0, left = 0;
  if (std::sscanf(log_text.c_str() + p,
                  "stopped after %llu reports (seq %llu..%llu), %llu left", &n,
                  &a, &b, &left) != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected line: ", log_text.substr(p, 120)));
  }
  run.reports = n;
  run.first = a;
  run.last = b;
  run.left = left;
  return run;
}

namespace {

class Db {
 public:
  static absl::StatusOr<std::unique_ptr<Db>> Open(const std::string& path) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK) {
      std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
      sqlite3_close(db);
      return absl::UnavailableError(absl::StrCat("open ", path, ": ", msg));
    }
    sqlite3_busy_timeout(db, 10000);
    return std::unique_ptr<Db>(new Db(db));
  }
  ~Db() { sqlite3_close(db_); }
  sqlite3* get() { return db_; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace

absl::StatusOr<std::vector<uint64_t>> StoredSeqs(const std::string& db_path,
                                                 const std::string& host_id) {
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(db_path);
  if (!db.ok()) return db.status();
  return StoredSeqsIn((*db)->get(), host_id);
}

absl::StatusOr<std::string> StoredReport(const std::string& db_path,
                                         const std::string& host_id,
                                         uint64_t seq) {
  absl::StatusOr<std::unique_ptr<Db>> db = Db::Open(db_path);
  if (!db.ok()) return db.status();
  return StoredReportIn((*db)->get(), host_id, seq);
}

std::string CheckContiguous(const std::vector<uint64_t>& seqs, uint64_t first,
                            uint64_t last) {
  std::map<uint64_t, int> count;
  for (uint64_t s : seqs) count[s]++;
  std::string problems;
  int reported = 0;
  for (uint64_t s = first; s <= last && reported < 20; ++s) {
    auto it = count.find(s);
    if (it == count.end()) {
      absl::StrAppend(&problems, "missing ", s, "; ");
      ++reported;
    } else if (it->second > 1) {
      absl::StrAppend(&problems, "seq ", s, " stored ", it->second, " times; ");
      ++reported;
    }
  }
  for (const auto& [s, n] : count) {
    if (s < first || s > last)
      absl::StrAppend(&problems, "unexpected seq ", s, "; ");
  }
  for (size_t i = 1; i < seqs.size(); ++i) {
    if (seqs[i] <= seqs[i - 1]) {
      absl::StrAppend(&problems, "out of order at ", seqs[i - 1], " -> ",
                      seqs[i], "; ");
      break;
    }
  }
  return problems;
}

}  // namespace tracehealth::testing
