// A server outage while a real agent reports every second from a fixture
// host: the server is killed (SIGKILL) and stays down for kOutage, then
// comes back on the same address. Every report the agent made is delivered
// exactly once afterwards: the stored seqs are contiguous, without
// duplicates, in order.
//
// The outage lasts 20 s here (the agent spools ~20 reports and backs off up
// to its 30 s maximum); longer outages only grow the spool, bounded by
// --spool_max_bytes.
#include <signal.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/reliability/processes.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr absl::Duration kOutage = absl::Seconds(20);

TEST(AgentOutageTest, EveryReportDeliveredExactlyOnceAfterOutage) {
  const std::string data = NewTempDir("outage-data");
  const std::string state = NewTempDir("outage-agent");
  const std::string logs = NewTempDir("outage-logs");
  const std::string db = data + "/tracehealth.db";

  absl::StatusOr<ServerRun> server = StartServerAt(data, "127.0.0.1:0", logs + "/server1.log");
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = server->grpc_address;
  auto agent = StartAgent("kasan-6.12-256cpu", address, state, "outage-1", absl::Seconds(1),
                          logs + "/agent.log", {"--shutdown_flush_timeout=30s"});
  ASSERT_TRUE(agent.ok()) << agent.status();

  // Reports flow.
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (absl::Now() < deadline) {
    auto seqs = StoredSeqs(db, "outage-1");
    if (seqs.ok() && seqs->size() >= 3) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  auto before = StoredSeqs(db, "outage-1");
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_GE(before->size(), 3u) << *ReadFile(logs + "/agent.log");

  // Outage.
  server->process->Kill();
  const absl::Time down_at = absl::Now();
  absl::SleepFor(kOutage);
  server = StartServerAt(data, address, logs + "/server2.log");
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_EQ(server->grpc_address, address);
  const absl::Time up_at = absl::Now();

  // The agent catches up: its seq made during the outage all arrive. The
  // number of reports made so far is at least the elapsed seconds.
  const uint64_t made_by_restart =
      before->front() + static_cast<uint64_t>(absl::ToDoubleSeconds(up_at - down_at)) +
      before->size() - 1;
  absl::Time caught_up_at = absl::InfiniteFuture();
  deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    auto seqs = StoredSeqs(db, "outage-1");
    if (seqs.ok() && !seqs->empty() && seqs->back() >= made_by_restart &&
        CheckContiguous(*seqs, seqs->front(), seqs->back()).empty()) {
      caught_up_at = absl::Now();
      break;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
  ASSERT_NE(caught_up_at, absl::InfiniteFuture())
      << "agent did not catch up within 60 s of the restart\n" << *ReadFile(logs + "/agent.log");

  // Stop the agent (it flushes what is left) and then the server.
  ASSERT_TRUE((*agent)->Signal(SIGTERM).ok());
  auto rc = (*agent)->Wait(absl::Seconds(60));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  ASSERT_TRUE(server->process->Wait(absl::Seconds(30)).ok());

  auto run = ParseAgentLog(*ReadFile(logs + "/agent.log"));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->left, 0u);
  auto seqs = StoredSeqs(db, "outage-1");
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  EXPECT_EQ(CheckContiguous(*seqs, run->first, run->last), "");
  EXPECT_EQ(seqs->size(), run->reports);
  std::printf(
      "outage %s: agent made %llu reports (seq %llu..%llu), %zu stored, each once; caught up "
      "%.1f s after the restart\n",
      absl::FormatDuration(kOutage).c_str(), static_cast<unsigned long long>(run->reports),
      static_cast<unsigned long long>(run->first), static_cast<unsigned long long>(run->last),
      seqs->size(), absl::ToDoubleSeconds(caught_up_at - up_at));
}

}  // namespace
}  // namespace tracehealth::testing
