// The server's SQLite database locked by another process: the sqlite3 CLI
// holds BEGIN EXCLUSIVE on the file while a real agent reports every 200 ms.
// The server stays up, the agent is told what is wrong when a write fails,
// nothing is lost, and once the lock is released every report the agent made
// is stored exactly once.
//
// Two lengths: 5 s (within the server's 10 s busy timeout: writes wait) and
// 15 s (beyond it: writes fail and streams end with the storage error).
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/reliability/processes.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

bool WaitStored(const std::string& db, const std::string& host, size_t n,
                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    auto seqs = StoredSeqs(db, host);
    if (seqs.ok() && seqs->size() >= n) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return false;
}

void LockWhileAgentReports(int lock_seconds) {
  const std::string data = NewTempDir("lk-data");
  const std::string state = NewTempDir("lk-agent");
  const std::string logs = NewTempDir("lk-logs");
  const std::string db = data + "/tracehealth.db";
  auto server = StartServerAt(data, "127.0.0.1:0", logs + "/server.log");
  ASSERT_TRUE(server.ok()) << server.status();
  auto agent =
      StartAgent("kprobe-multi-6.14", server->grpc_address, state, "locked-1",
                 absl::Milliseconds(200), logs + "/agent.log",
                 {"--shutdown_flush_timeout=60s"});
  ASSERT_TRUE(agent.ok()) << agent.status();
  ASSERT_TRUE(WaitStored(db, "locked-1", 3, absl::Seconds(30)));

  // Another process takes the database.
  const std::string script = absl::StrCat(
      "(echo 'PRAGMA busy_timeout=10000;'; echo 'BEGIN EXCLUSIVE;'; "
      "echo \"SELECT 'lock-held';\"; sleep ",
      lock_seconds,
      "; echo 'COMMIT;'; echo \"SELECT 'lock-released';\") | sqlite3 '", db,
      "'");
  auto locker =
      Subprocess::Start({"/bin/sh", "-c", script}, logs + "/sqlite3.log");
  ASSERT_TRUE(locker.ok()) << locker.status();
  // sqlite3 prints the busy_timeout pragma's value first.
  auto held = WaitForFileContaining(logs + "/sqlite3.log", "lock-held",
                                    absl::Seconds(20));
  ASSERT_TRUE(held.ok()) << held.status();
  const absl::Time locked_at = absl::Now();
  auto at_lock = StoredSeqs(db, "locked-1");
  ASSERT_TRUE(at_lock.ok()) << at_lock.status();

  // While locked: nothing new is committed, the server stays up.
  absl::SleepFor(absl::Seconds(lock_seconds - 3));
  auto during = StoredSeqs(db, "locked-1");
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_EQ(during->size(), at_lock->size())
      << "writes committed through an exclusive lock";
  EXPECT_TRUE(server->process->running());
  auto lrc = (*locker)->Wait(absl::Seconds(30));
  ASSERT_TRUE(lrc.ok()) << lrc.status();
  EXPECT_EQ(*lrc, 0) << *ReadFile(logs + "/sqlite3.log");
  const absl::Time released_at = absl::Now();

  // After the release the backlog arrives.
  const size_t backlog_target =
      at_lock->size() +
      static_cast<size_t>(absl::ToDoubleSeconds(released_at - locked_at) / 0.2 *
                          0.8);
  ASSERT_TRUE(WaitStored(db, "locked-1", backlog_target, absl::Seconds(60)))
      << "no recovery after the lock was released\n"
      << *ReadFile(logs + "/server.log");
  const absl::Duration recovery = absl::Now() - released_at;

  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  auto rc = (*agent)->Wait(absl::Seconds(90));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);
  auto run = ParseAgentLog(*ReadFile(logs + "/agent.log"));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->left, 0u);
  auto seqs = StoredSeqs(db, "locked-1");
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  EXPECT_EQ(CheckContiguous(*seqs, run->first, run->last), "")
      << "agent log:\n"
      << *ReadFile(logs + "/agent.log") << "\nserver log:\n"
      << *ReadFile(logs + "/server.log");

  // When a write failed, the agent was told why.
  const std::string agent_log = *ReadFile(logs + "/agent.log");
  std::vector<std::string> storage_lines;
  for (absl::string_view line : absl::StrSplit(agent_log, '\n')) {
    if (absl::StrContains(line, "storage")) storage_lines.emplace_back(line);
  }
  if (lock_seconds > 10) {
    EXPECT_FALSE(storage_lines.empty())
        << "agent never saw the storage error:\n"
        << agent_log;
    for (const std::string& line : storage_lines) {
      EXPECT_TRUE(absl::StrContains(line, "database is locked")) << line;
    }
    // The server says so in its own log too.
    const std::string server_log = *ReadFile(logs + "/server.log");
    EXPECT_TRUE(absl::StrContains(server_log, "failed: ") &&
                absl::StrContains(server_log, "database is locked"))
        << server_log;
  }
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  auto src = server->process->Wait(absl::Seconds(30));
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(*src, 0);
  std::printf(
      "locked %d s: %llu reports made, %zu stored once each, recovered %.1f s "
      "after "
      "release; agent saw: %s\n",
      lock_seconds, static_cast<unsigned long long>(run->reports), seqs->size(),
      absl::ToDoubleSeconds(recovery),
      storage_lines.empty() ? "(nothing)" : storage_lines.front().c_str());
}

TEST(SqliteLockedTest, LockWithinBusyTimeoutDelaysWrites) {
  LockWhileAgentReports(5);
}

// Beyond the busy timeout a batch fails while later ones may commit once the
// lock is gone; acks must never cover the failed seq (the agent would drop a
// report that was never stored).
TEST(SqliteLockedTest, LockBeyondBusyTimeoutLosesNothing) {
  LockWhileAgentReports(15);
}

}  // namespace
}  // namespace tracehealth::testing
