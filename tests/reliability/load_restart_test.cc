// Bounded load test: kHosts simulated agents report every kPeriod for
// kDuration while the server is restarted twice on the same address, first
// killed (SIGKILL) under load, then stopped gracefully (SIGTERM). Each
// simulated agent behaves like the real one: it keeps unacked reports,
// reconnects with a short backoff and resends them.
//
// Checked and printed: at the kill, every report acked so far is in the
// SQLite file (read while the server is down); at the end, every report made
// is stored exactly once (held) and none is missing (lost).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/reliability/processes.h"
#include "tests/util/sample_report.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr int kHosts = 100;
constexpr absl::Duration kPeriod = absl::Milliseconds(500);
constexpr absl::Duration kDuration = absl::Seconds(45);

class SimAgent {
 public:
  SimAgent(std::string address, int index)
      : address_(std::move(address)), host_id_(absl::StrCat("load-", index)) {
    server::SampleHost host = server::FleetHost(index);
    host.host_id = host_id_;
    report_ = server::SampleReport(host, 1, absl::Now());
  }

  const std::string& host_id() const { return host_id_; }

  // Reports every kPeriod (offset by `phase`) until `stop`, then drains the
  // unacked reports for up to `drain`.
  void Run(const std::atomic<bool>& stop, absl::Duration phase,
           absl::Duration drain) {
    absl::SleepFor(phase);
    absl::Time next = absl::Now();
    while (!stop.load()) {
      Make();
      Pump();
      next += kPeriod;
      absl::SleepFor(next - absl::Now());
    }
    const absl::Time deadline = absl::Now() + drain;
    while (absl::Now() < deadline && acked() < made()) {
      Pump();
      absl::SleepFor(absl::Milliseconds(100));
    }
    if (stream_ != nullptr) {
      stream_->WaitAcked(made(), absl::Seconds(5));
      Absorb();
      stream_->Finish();
    }
  }

  uint64_t made() {
    absl::MutexLock lock(&mu_);
    return made_;
  }
  uint64_t acked() {
    absl::MutexLock lock(&mu_);
    return acked_;
  }
  int reconnects() const { return reconnects_; }

 private:
  void Make() {
    absl::MutexLock lock(&mu_);
    unacked_.push_back(++made_);
  }

  // Folds the current stream's ack into acked_ and drops acked reports.
  void Absorb() {
    if (stream_ == nullptr) return;
    const uint64_t a = stream_->acked();
    absl::MutexLock lock(&mu_);
    acked_ = std::max(acked_, a);
    while (!unacked_.empty() && unacked_.front() <= acked_)
      unacked_.pop_front();
  }

  // Sends what is unacked, reconnecting (after a backoff) when the stream
  // broke.
  void Pump() {
    Absorb();
    if (stream_ != nullptr && !stream_ok_) {
      stream_->Finish();
      stream_.reset();
      retry_at_ = absl::Now() + absl::Milliseconds(300);
    }
    if (stream_ == nullptr) {
      if (absl::Now() < retry_at_) return;
      if (channel_ == nullptr) {
        channel_ =
            grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
        stub_ = v1::TelemetryIngest::NewStub(channel_);
      }
      stream_ = std::make_unique<ReportStream>(stub_.get());
      stream_ok_ = true;
      sent_upto_ = 0;
      ++reconnects_;
    }
    std::vector<uint64_t> to_send;
    {
      absl::MutexLock lock(&mu_);
      for (uint64_t s : unacked_) {
        if (s > sent_upto_) to_send.push_back(s);
      }
    }
    for (uint64_t s : to_send) {
      report_.set_seq(s);
      report_.mutable_observed_at()->set_seconds(
          absl::ToUnixSeconds(absl::Now()));
      if (!stream_->Send(report_)) {
        stream_ok_ = false;
        return;
      }
      sent_upto_ = s;
    }
  }

  const std::string address_;
  const std::string host_id_;
  v1::HostReport report_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TelemetryIngest::Stub> stub_;
  std::unique_ptr<ReportStream> stream_;
  bool stream_ok_ = false;
  uint64_t sent_upto_ = 0;
  absl::Time retry_at_ = absl::InfinitePast();
  int reconnects_ = 0;
  absl::Mutex mu_;
  uint64_t made_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<uint64_t> unacked_ ABSL_GUARDED_BY(mu_);
};

TEST(LoadRestartTest, ManyAgentsThroughKillAndRestart) {
  const std::string data = NewTempDir("load-data");
  const std::string logs = NewTempDir("load-logs");
  const std::string db = data + "/tracehealth.db";
  auto server = StartServerAt(data, "127.0.0.1:0", logs + "/server1.log");
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string address = server->grpc_address;

  std::vector<std::unique_ptr<SimAgent>> agents;
  for (int i = 0; i < kHosts; ++i)
    agents.push_back(std::make_unique<SimAgent>(address, i));
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
  int reconnects = 0;
  for (int i = 0; i < kHosts; ++i) {
    made += agents[i]->made();
    acked += agents[i]->acked();
    reconnects += agents[i]->reconnects();
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
      static_cast<unsigned long long>(duplicates), reconnects);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_EQ(held, made);
  EXPECT_GT(acked_at_kill, 0u);
}

}  // namespace
}  // namespace tracehealth::testing
