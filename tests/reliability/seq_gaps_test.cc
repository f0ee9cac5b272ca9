// Exactly-once for a host with more seq gaps than the server's in-memory
// ledger keeps (64 runs), against the real tracehealth-server binary: a
// report arriving in a gap far behind the newest one is stored once and
// acked, through a kill -9 and a clean restart, and replays of everything
// store nothing twice. Every seq the test sends is checked in the SQLite
// file.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
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

constexpr char kHost[] = "gappy";

v1::HostReport Report(uint64_t seq) {
  server::SampleHost host = server::FleetHost(7);
  host.host_id = kHost;
  return server::SampleReport(host, seq, absl::Now());
}

class SeqGapsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = NewTempDir("gaps-data");
    logs_ = NewTempDir("gaps-logs");
    db_ = data_ + "/tracehealth.db";
    Start();
  }

  void Start() {
    // Unlimited rate: the test sends about 600 reports of one host at once.
    auto s = StartServerAt(data_, "127.0.0.1:0",
                           absl::StrCat(logs_, "/server", ++starts_, ".log"),
                           {"--host_report_rate=0"});
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    stub_ = v1::TelemetryIngest::NewStub(grpc::CreateChannel(
        server_.grpc_address, grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_.process != nullptr && server_.process->running()) {
      ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
      auto rc = server_.process->Wait(absl::Seconds(30));
      ASSERT_TRUE(rc.ok()) << rc.status();
      EXPECT_EQ(*rc, 0);
    }
  }

  // Sends `seqs` in order on one stream, then `marker` (a seq above every
  // one sent so far): the writer commits a stream's reports in order, so
  // once `marker` is acked every report before it was handled. Returns the
  // final acked seq.
  uint64_t Send(const std::vector<uint64_t>& seqs, uint64_t marker) {
    ReportStream stream(stub_.get());
    for (uint64_t seq : seqs) EXPECT_TRUE(stream.Send(Report(seq))) << seq;
    EXPECT_TRUE(stream.Send(Report(marker)));
    EXPECT_TRUE(stream.WaitAcked(marker)) << "marker " << marker;
    EXPECT_TRUE(stream.rejections().empty());
    grpc::Status st = stream.Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
    return stream.acked();
  }

  // Seqs the file holds for the host, sorted; `twice` counts repeats.
  std::vector<uint64_t> Stored(size_t* twice) {
    auto seqs = StoredSeqs(db_, kHost);
    EXPECT_TRUE(seqs.ok()) << seqs.status();
    std::vector<uint64_t> out = seqs.ok() ? *seqs : std::vector<uint64_t>();
    std::sort(out.begin(), out.end());
    const size_t all = out.size();
    out.erase(std::unique(out.begin(), out.end()), out.end());
    *twice = all - out.size();
    return out;
  }

  std::string data_, logs_, db_;
  int starts_ = 0;
  ServerRun server_;
  std::unique_ptr<v1::TelemetryIngest::Stub> stub_;
};

std::vector<uint64_t> Range(uint64_t first, uint64_t last, uint64_t step) {
  std::vector<uint64_t> out;
  for (uint64_t s = first; s <= last; s += step) out.push_back(s);
  return out;
}

std::vector<uint64_t> Missing(const std::vector<uint64_t>& stored,
                              const std::vector<uint64_t>& want) {
  std::vector<uint64_t> out;
  for (uint64_t s : want) {
    if (!std::binary_search(stored.begin(), stored.end(), s)) out.push_back(s);
  }
  return out;
}

// 65 runs of odd seqs (1, 3, ..., 129), then seq 2: seq 2 is in the oldest
// gap, the one a 64-run ledger merges first.
TEST_F(SeqGapsTest, SixtyFiveRunsThenTheOldestGap) {
  const std::vector<uint64_t> odd = Range(1, 129, 2);  // 65 seqs, 65 runs
  ASSERT_EQ(odd.size(), 65u);
  EXPECT_EQ(Send(odd, 131), 131u);
  EXPECT_EQ(Send({2}, 133), 133u);
  size_t twice = 0;
  std::vector<uint64_t> stored = Stored(&twice);
  EXPECT_TRUE(std::binary_search(stored.begin(), stored.end(), 2))
      << "seq 2 acked but not stored";
  // 65 odd seqs + 131 + 2 + 133.
  EXPECT_EQ(stored.size(), 68u);
  EXPECT_EQ(twice, 0u);
}

// 100 runs, every gap filled in two halves around a kill -9 and a clean
// restart, with full replays in between: 1..201 stored exactly once.
TEST_F(SeqGapsTest, EveryGapFilledOnceAcrossRestarts) {
  // 1, 3, ..., 199 (100 runs) and the marker 201.
  EXPECT_EQ(Send(Range(1, 199, 2), 201), 201u);
  // Half of the gaps (4, 8, ..., 200): most of them lie where a 64-run
  // summary has merged runs.
  const std::vector<uint64_t> fours = Range(4, 200, 4);
  EXPECT_EQ(Send(fours, 203), 203u);
  size_t twice = 0;
  std::vector<uint64_t> stored = Stored(&twice);
  EXPECT_EQ(Missing(stored, fours), std::vector<uint64_t>{});
  // 100 odd + 50 multiples of 4 + markers 201, 203.
  EXPECT_EQ(stored.size(), 152u);

  // kill -9: the ledger is rebuilt from its checkpoint and the rows after it.
  server_.process->Kill();
  Start();
  std::vector<uint64_t> all = Range(1, 203, 1);
  std::vector<uint64_t> replay;  // every stored seq again
  for (uint64_t s : all) {
    if (std::binary_search(stored.begin(), stored.end(), s))
      replay.push_back(s);
  }
  EXPECT_EQ(Send(replay, 205), 205u);
  // The other half (2, 6, ..., 198).
  const std::vector<uint64_t> twos = Range(2, 198, 4);
  EXPECT_EQ(Send(twos, 207), 207u);

  // Clean stop (the ledger is checkpointed), start, send 1..208: all stored
  // already but 202, 204, 206 and 208, the gaps between the markers.
  ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
  auto rc = server_.process->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0);
  Start();
  EXPECT_EQ(Send(Range(1, 208, 1), 209), 209u);

  stored = Stored(&twice);
  const std::vector<uint64_t> want = Range(1, 209, 1);
  EXPECT_EQ(Missing(stored, want), std::vector<uint64_t>{});
  EXPECT_EQ(stored, want);
  EXPECT_EQ(twice, 0u);
  std::printf(
      "seq gaps: 100 runs, %zu late seqs in the gaps, 3 full replays, 2 "
      "restarts: %zu seqs stored, %zu stored twice\n",
      fours.size() + twos.size(), stored.size(), twice);
}

}  // namespace
}  // namespace tracehealth::testing
