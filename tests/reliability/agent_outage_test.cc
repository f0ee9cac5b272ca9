// A server outage of several minutes while real agents report every second:
// two agents on two fixture hosts stream to the server, which is killed
// (SIGKILL), stays down for kOutage and comes back on the same address.
// Every report each agent made is delivered exactly once afterwards: the
// stored seqs are contiguous, without duplicates, in order.
//
// Why this is quick to catch up and loses nothing: the agent's reconnect
// backoff is capped at 30 s (agent/uplink/backoff.h), so the first reconnect
// comes at most ~30 s after the restart; its spool (--spool_max_bytes, 64 MiB
// by default) holds the ~180 reports made during the outage with room to spare
// (nothing is dropped: the test checks every seq arrives).
//
// Printed per agent: reports made during the outage (by their observed_at),
// delivered, duplicates, and the catch-up time after the restart.
#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tests/reliability/processes.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr absl::Duration kOutage = absl::Minutes(3);

struct OutageAgent {
  std::string fixture;
  std::string host_id;
  std::string state_dir;
  std::string log;
  std::unique_ptr<Subprocess> process;
  std::vector<uint64_t> before;  // stored when the server was killed
  absl::Time caught_up_at = absl::InfiniteFuture();
};

absl::Time ObservedAt(const std::string& db, const std::string& host_id,
                      uint64_t seq) {
  auto blob = StoredReport(db, host_id, seq);
  v1::HostReport report;
  if (!blob.ok() || !report.ParseFromString(*blob)) return absl::InfinitePast();
  return absl::FromUnixSeconds(report.observed_at().seconds()) +
         absl::Nanoseconds(report.observed_at().nanos());
}

TEST(AgentOutageTest, EveryReportDeliveredExactlyOnceAfterOutage) {
  const std::string data = NewTempDir("outage-data");
  const std::string logs = NewTempDir("outage-logs");
  const std::string db = data + "/tracehealth.db";

  absl::StatusOr<ServerRun> server =
      StartServerAt(data, "127.0.0.1:0", logs + "/server1.log");
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = server->grpc_address;

  std::vector<OutageAgent> agents(2);
  agents[0].fixture = "kasan-6.12-256cpu";
  agents[1].fixture = "kprobe-multi-6.14";
  for (size_t i = 0; i < agents.size(); ++i) {
    OutageAgent& a = agents[i];
    a.host_id = absl::StrCat("outage-", i + 1);
    a.state_dir = NewTempDir(absl::StrCat("outage-agent", i + 1));
    a.log = absl::StrCat(logs, "/agent", i + 1, ".log");
    auto p =
        StartAgent(a.fixture, address, a.state_dir, a.host_id, absl::Seconds(1),
                   a.log, {"--shutdown_flush_timeout=30s"});
    ASSERT_TRUE(p.ok()) << p.status();
    a.process = std::move(*p);
  }

  // Reports flow from both.
  for (OutageAgent& a : agents) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      auto seqs = StoredSeqs(db, a.host_id);
      if (seqs.ok() && seqs->size() >= 3) break;
      absl::SleepFor(absl::Milliseconds(200));
    }
  }

  // Outage. What was stored is read from the file while the server is down.
  server->process->Kill();
  const absl::Time down_at = absl::Now();
  for (OutageAgent& a : agents) {
    auto before = StoredSeqs(db, a.host_id);
    ASSERT_TRUE(before.ok()) << before.status();
    ASSERT_GE(before->size(), 3u) << *ReadFile(a.log);
    a.before = *before;
  }
  absl::SleepFor(kOutage);
  server = StartServerAt(data, address, logs + "/server2.log");
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_EQ(server->grpc_address, address);
  const absl::Time up_at = absl::Now();

  // Each agent catches up: its seqs made during the outage all arrive. The
  // number of reports made so far is at least the elapsed seconds.
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  for (OutageAgent& a : agents) {
    const uint64_t made_by_restart =
        a.before.front() +
        static_cast<uint64_t>(absl::ToDoubleSeconds(up_at - down_at)) +
        a.before.size() - 1;
    while (absl::Now() < deadline) {
      auto seqs = StoredSeqs(db, a.host_id);
      if (seqs.ok() && !seqs->empty() && seqs->back() >= made_by_restart &&
          CheckContiguous(*seqs, seqs->front(), seqs->back()).empty()) {
        a.caught_up_at = absl::Now();
        break;
      }
      absl::SleepFor(absl::Milliseconds(250));
    }
    ASSERT_NE(a.caught_up_at, absl::InfiniteFuture())
        << a.host_id << " did not catch up within 90 s of the restart\n"
        << *ReadFile(a.log);
  }

  // Stop the agents (they flush what is left) and then the server.
  for (OutageAgent& a : agents) ASSERT_TRUE(a.process->Signal(SIGTERM).ok());
  for (OutageAgent& a : agents) {
    auto rc = a.process->Wait(absl::Seconds(60));
    ASSERT_TRUE(rc.ok()) << rc.status();
    EXPECT_EQ(*rc, 0);
  }
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  ASSERT_TRUE(server->process->Wait(absl::Seconds(30)).ok());

  for (OutageAgent& a : agents) {
    auto run = ParseAgentLog(*ReadFile(a.log));
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->left, 0u);
    auto seqs = StoredSeqs(db, a.host_id);
    ASSERT_TRUE(seqs.ok()) << seqs.status();
    EXPECT_EQ(CheckContiguous(*seqs, run->first, run->last), "");
    EXPECT_EQ(seqs->size(), run->reports);

    const std::set<uint64_t> distinct(seqs->begin(), seqs->end());
    uint64_t during = 0;
    for (uint64_t seq = a.before.back() + 1; seq <= run->last; ++seq) {
      const absl::Time t = ObservedAt(db, a.host_id, seq);
      if (t >= down_at && t < up_at) ++during;
    }
    std::printf(
        "outage %s, %s (%s): made %llu reports (seq %llu..%llu), %llu of them "
        "during the "
        "outage; delivered %zu, duplicates %zu; caught up %.1f s after the "
        "restart\n",
        absl::FormatDuration(kOutage).c_str(), a.host_id.c_str(),
        a.fixture.c_str(), static_cast<unsigned long long>(run->reports),
        static_cast<unsigned long long>(run->first),
        static_cast<unsigned long long>(run->last),
        static_cast<unsigned long long>(during), distinct.size(),
        seqs->size() - distinct.size(),
        absl::ToDoubleSeconds(a.caught_up_at - up_at));
    // One report a second: nearly every second of the outage has its report.
    EXPECT_GE(during,
              static_cast<uint64_t>(absl::ToInt64Seconds(kOutage)) * 9 / 10);
  }
}

}  // namespace
}  // namespace tracehealth::testing
