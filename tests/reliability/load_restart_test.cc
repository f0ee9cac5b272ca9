// Bounded load test: kHosts simulated agents report every kPeriod for
// kDuration while the server is restarted twice on the same address, first
// killed (SIGKILL) under load, then stopped gracefully (SIGTERM). Each
// simulated agent (tests/replicas/sim_agent.h, with one address) behaves
// like the real one: it keeps unacked reports, reconnects with a short
// backoff and resends them.
//
// Checked and printed: at the kill, every report acked so far is in the
// SQLite file (read while the server is down); at the end, every report made
// is stored exactly once (held) and none is missing (lost).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/reliability/processes.h"
#include "tests/replicas/sim_agent.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr int kHosts = 100;
constexpr absl::Duration kPeriod = absl::Milliseconds(500);
constexpr absl::Duration kDuration = absl::Seconds(45);

TEST(LoadRestartTest, ManyAgentsThroughKillAndRestart) {
  const std::string data = NewTempDir("load-data");
  const std::string logs = NewTempDir("load-logs");
  const std::string db = data + "/tracehealth.db";
  auto server = StartServerAt(data, "127.0.0.1:0", logs + "/server1.log");
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = server->grpc_address;

  std::vector<std::unique_ptr<SimAgent>> agents;
  for (int i = 0; i < kHosts; ++i)
    agents.push_back(std::make_unique<SimAgent>(
        std::vector<std::string>{address}, "load-", i, 0, kPeriod));
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kHosts; ++i) {
    threads.emplace_back([&, i] {
      agents[i]->Run(stop, kPeriod * i / kHosts, absl::Seconds(40));
    });
  }
  const absl::Time start = absl::Now();

  // Restart 1: SIGKILL under load. Every report acked before the kill is in
  // the file.
  absl::SleepFor(kDuration / 3);
  std::vector<uint64_t> acked_before_kill(kHosts);
  server->process->Kill();
  for (int i = 0; i < kHosts; ++i) acked_before_kill[i] = agents[i]->acked();
  uint64_t acked_at_kill = 0, missing_at_kill = 0;
  for (int i = 0; i < kHosts; ++i) {
    auto seqs = StoredSeqs(db, agents[i]->host_id());
    ASSERT_TRUE(seqs.ok()) << seqs.status();
    acked_at_kill += acked_before_kill[i];
    for (uint64_t s = 1; s <= acked_before_kill[i]; ++s) {
      if (!std::binary_search(seqs->begin(), seqs->end(), s)) ++missing_at_kill;
    }
  }
  EXPECT_EQ(missing_at_kill, 0u)
      << "acked reports missing from the file after SIGKILL";
  absl::SleepFor(absl::Seconds(1));
  server = StartServerAt(data, address, logs + "/server2.log");
  ASSERT_TRUE(server.ok()) << server.status();

  // Restart 2: SIGTERM (graceful).
  absl::SleepFor(start + kDuration * 2 / 3 - absl::Now());
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  auto rc = server->process->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);
  server = StartServerAt(data, address, logs + "/server3.log");
  ASSERT_TRUE(server.ok()) << server.status();

  absl::SleepFor(start + kDuration - absl::Now());
  stop.store(true);
  for (auto& t : threads) t.join();
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  rc = server->process->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);

  uint64_t made = 0, acked = 0, held = 0, lost = 0, duplicates = 0;
  int streams = 0;
  for (int i = 0; i < kHosts; ++i) {
    made += agents[i]->made();
    acked += agents[i]->acked();
    streams += agents[i]->streams();
    auto seqs = StoredSeqs(db, agents[i]->host_id());
    ASSERT_TRUE(seqs.ok()) << seqs.status();
    std::vector<uint64_t> sorted = *seqs;
    std::sort(sorted.begin(), sorted.end());
    duplicates += sorted.size() -
                  (std::unique(sorted.begin(), sorted.end()) - sorted.begin());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (uint64_t s = 1; s <= agents[i]->made(); ++s) {
      if (std::binary_search(sorted.begin(), sorted.end(), s)) {
        ++held;
      } else {
        ++lost;
      }
    }
    EXPECT_EQ(agents[i]->acked(), agents[i]->made()) << agents[i]->host_id();
  }
  std::printf(
      "load: %d hosts every %s for %s, server SIGKILLed at %s and SIGTERMed at "
      "%s\n"
      "  at the kill: %llu reports acked, %llu of them missing from the file\n"
      "  made %llu, acked %llu, held %llu, lost %llu, stored twice %llu, "
      "streams opened %d\n",
      kHosts, absl::FormatDuration(kPeriod).c_str(),
      absl::FormatDuration(kDuration).c_str(),
      absl::FormatDuration(kDuration / 3).c_str(),
      absl::FormatDuration(kDuration * 2 / 3).c_str(),
      static_cast<unsigned long long>(acked_at_kill),
      static_cast<unsigned long long>(missing_at_kill),
      static_cast<unsigned long long>(made),
      static_cast<unsigned long long>(acked),
      static_cast<unsigned long long>(held),
      static_cast<unsigned long long>(lost),
      static_cast<unsigned long long>(duplicates), streams);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_EQ(held, made);
  EXPECT_GT(acked_at_kill, 0u);
}

}  // namespace
}  // namespace tracehealth::testing
