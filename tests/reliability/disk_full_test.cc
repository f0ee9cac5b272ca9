// Disk full on the server, simulated without root: the server runs under a
// file-size limit (prlimit --fsize, soft limit only) a little above its
// database's size, so its SQLite writes fail with EFBIG like on a full disk.
// A client keeps streaming hosts' reports, reconnecting and resending
// from its last ack like an agent. The server must stay up, refuse with a
// clear error while full (ingest applies backpressure: nothing is acked that
// is not stored), keep the database intact, and store every report exactly
// once when the limit is lifted (space returns).
#include <signal.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/reliability/processes.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

constexpr int kHosts = 10;
constexpr uint64_t kPerHost = 300;
constexpr int64_t kLimitBytes = 2 << 20;

// `check_acked_stored`: also require every acked report to be stored, and
// every report in the end.
void FillDiskThenLift(bool check_acked_stored) {
  const std::string data = NewTempDir("full-data");
  const std::string logs = NewTempDir("full-logs");
  const std::string db = data + "/tracehealth.db";
  // SIGXFSZ is ignored for the server: writes past the limit then fail with
  // EFBIG instead of killing the process (as ENOSPC would on a full disk).
  // (An ignored signal stays ignored across exec; the shell's trap sets it.)
  auto server = StartServerAt(
      data, "127.0.0.1:0", logs + "/server.log", {},
      {"/bin/sh", "-c", "trap '' XFSZ; exec \"$@\"", "sh", "/usr/bin/prlimit",
       absl::StrCat("--fsize=", kLimitBytes, ":unlimited"), "--"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = grpc::CreateChannel(server->grpc_address,
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::TelemetryIngest::NewStub(channel);

  // Several hosts, each well inside the per-host rate limit's burst.
  std::vector<v1::HostReport> reports;
  for (int h = 0; h < kHosts; ++h) {
    server::SampleHost host = server::FleetHost(11 + h);
    host.host_id = absl::StrCat("full-", h);
    reports.push_back(server::SampleReport(host, 1, absl::Now()));
  }
  std::printf("report size %zu bytes, limit %lld bytes\n",
              reports[0].ByteSizeLong(), static_cast<long long>(kLimitBytes));

  std::vector<uint64_t> acked(kHosts, 0);
  int stream_errors = 0;
  std::string first_error;
  bool lifted = false;
  uint64_t acked_when_full = 0;
  std::map<std::string, int> errors;
  const absl::Time deadline = absl::Now() + absl::Seconds(120);
  for (int h = 0; h < kHosts; ++h) {
    v1::HostReport& report = reports[h];
    while (acked[h] < kPerHost && absl::Now() < deadline) {
      ReportStream s(stub.get());
      for (uint64_t seq = acked[h] + 1; seq <= kPerHost; ++seq) {
        report.set_seq(seq);
        if (!s.Send(report)) break;
        if (seq % 100 == 0 && !s.WaitAcked(seq, absl::Seconds(15))) break;
      }
      s.WaitAcked(kPerHost, absl::Seconds(15));
      acked[h] = std::max(acked[h], s.acked());
      grpc::Status st = s.Finish();
      if (st.ok()) continue;
      ++stream_errors;
      if (first_error.empty()) first_error = st.error_message();
      errors[absl::StrCat(lifted ? "after lift: " : "full: ",
                          st.error_message())]++;
      ASSERT_TRUE(server->process->running());
      auto exited = server->process->Wait(absl::Milliseconds(1));
      ASSERT_EQ(exited.status().code(), absl::StatusCode::kDeadlineExceeded)
          << "server died when the disk filled: exit "
          << (exited.ok() ? *exited : -1) << "\n"
          << *ReadFile(logs + "/server.log");
      if (!lifted && stream_errors >= 1) {
        // Nothing acked is missing while full.
        for (int i = 0; i <= h; ++i) {
          acked_when_full += acked[i];
          auto seqs = StoredSeqs(db, absl::StrCat("full-", i));
          ASSERT_TRUE(seqs.ok()) << seqs.status();
          if (check_acked_stored) {
            EXPECT_EQ(CheckContiguous(*seqs, 1, acked[i]), "")
                << "acked but not stored";
          }
        }
        // Space returns.
        auto lift = Subprocess::Start({"/usr/bin/prlimit", "--pid",
                                       absl::StrCat(server->process->pid()),
                                       "--fsize=unlimited:unlimited"});
        ASSERT_TRUE(lift.ok()) << lift.status();
        ASSERT_EQ(*(*lift)->Wait(absl::Seconds(10)), 0);
        lifted = true;
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
  }
  for (const auto& [msg, n] : errors)
    std::printf("stream error x%d: %s\n", n, msg.c_str());
  EXPECT_TRUE(lifted) << "the file-size limit was never reached";
  EXPECT_GE(stream_errors, 1);
  for (int h = 0; h < kHosts; ++h) EXPECT_EQ(acked[h], kPerHost) << h;
  EXPECT_FALSE(first_error.empty());
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  auto rc = server->process->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0) << *ReadFile(logs + "/server.log");

  size_t stored = 0;
  for (int h = 0; h < kHosts; ++h) {
    auto seqs = StoredSeqs(db, absl::StrCat("full-", h));
    ASSERT_TRUE(seqs.ok()) << seqs.status();
    if (check_acked_stored) {
      EXPECT_EQ(CheckContiguous(*seqs, 1, kPerHost), "") << h;
    } else {
      // Recovered: the newest report of every host is stored, once each.
      ASSERT_FALSE(seqs->empty()) << h;
      EXPECT_EQ(seqs->back(), kPerHost) << h;
      EXPECT_EQ(std::set<uint64_t>(seqs->begin(), seqs->end()).size(),
                seqs->size())
          << h;
    }
    stored += seqs->size();
  }
  auto check = Subprocess::Start(
      {"/bin/sh", "-c",
       absl::StrCat("sqlite3 '", db, "' 'PRAGMA integrity_check;'")},
      logs + "/integrity.log");
  ASSERT_TRUE(check.ok());
  ASSERT_TRUE((*check)->Wait(absl::Seconds(30)).ok());
  EXPECT_EQ(*ReadFile(logs + "/integrity.log"), "ok\n");
  std::printf(
      "disk full at %lld bytes: %llu acked when full, %d stream errors (first: "
      "%s); "
      "after the limit was lifted %zu of %llu stored, integrity ok\n",
      static_cast<long long>(kLimitBytes),
      static_cast<unsigned long long>(acked_when_full), stream_errors,
      first_error.c_str(), stored,
      static_cast<unsigned long long>(kHosts * kPerHost));
}

// The server survives a full disk, refuses with the storage error, keeps the
// database intact and takes every host's reports again once space returns.
TEST(DiskFullTest, FullDiskRefusesThenRecovers) { FillDiskThenLift(false); }

// Nothing acked is lost: a batch that fails on the full disk may be followed
// by one that commits, and acks must never cover the failed seqs.
TEST(DiskFullTest, AckedReportsSurviveFullDisk) { FillDiskThenLift(true); }

}  // namespace
}  // namespace tracehealth::testing
