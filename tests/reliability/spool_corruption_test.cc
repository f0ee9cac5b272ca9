// A truncated and corrupted agent spool: the agent spools reports while the
// server is unreachable, then its segment file is damaged on disk (a payload
// byte flipped, a record's magic overwritten, the last record cut in half).
// Restarted with the server up, the agent skips and counts the bad records
// and delivers every intact one exactly once; nothing damaged is stored.
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tests/reliability/processes.h"
#include "tests/util/ports.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

struct Record {
  uint64_t offset = 0;  // of the header
  uint32_t length = 0;  // payload
  uint64_t seq = 0;
};

uint32_t Le32(const std::string& d, size_t at) {
  uint32_t v;
  std::memcpy(&v, d.data() + at, 4);
  return v;
}
uint64_t Le64(const std::string& d, size_t at) {
  uint64_t v;
  std::memcpy(&v, d.data() + at, 8);
  return v;
}

// Records of one segment: magic "THSP" | len u32 | seq u64 | crc u32 | payload.
std::vector<Record> Records(const std::string& data) {
  std::vector<Record> out;
  size_t at = 0;
  while (at + 20 <= data.size() && data.compare(at, 4, "THSP") == 0) {
    Record r;
    r.offset = at;
    r.length = Le32(data, at + 4);
    r.seq = Le64(data, at + 8);
    out.push_back(r);
    at += 20 + r.length;
  }
  return out;
}

TEST(SpoolCorruptionTest, BadRecordsSkippedAndCountedRestDelivered) {
  const std::string state = NewTempDir("spool-agent");
  const std::string logs = NewTempDir("spool-logs");
  const std::string data = NewTempDir("spool-data");
  const std::string db = data + "/tracehealth.db";

  // 1. No server: 10 reports go to the spool and stay there.
  const std::string nowhere = absl::StrCat("127.0.0.1:", PickFreePort());
  auto agent = StartAgent("fgraph-active-6.19", nowhere, state, "spool-1",
                          absl::Milliseconds(100), logs + "/agent1.log",
                          {"--max_reports=10", "--shutdown_flush_timeout=1s"});
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto rc = (*agent)->Wait(absl::Seconds(60));
  ASSERT_TRUE(rc.ok()) << rc.status();
  auto run1 = ParseAgentLog(*ReadFile(logs + "/agent1.log"));
  ASSERT_TRUE(run1.ok()) << run1.status() << *ReadFile(logs + "/agent1.log");
  ASSERT_EQ(run1->reports, 10u);
  ASSERT_EQ(run1->left, 10u);

  // 2. Damage the segment holding them.
  std::vector<std::string> segments;
  for (const auto& e : std::filesystem::directory_iterator(state + "/spool")) {
    if (e.path().filename().string().rfind("seg-", 0) == 0)
      segments.push_back(e.path());
  }
  ASSERT_EQ(segments.size(), 1u);
  std::string seg = *ReadFile(segments[0]);
  std::vector<Record> recs = Records(seg);
  ASSERT_EQ(recs.size(), 10u);
  const uint64_t flipped = recs[2].seq, unmagic = recs[5].seq,
                 truncated = recs[9].seq;
  seg[recs[2].offset + 20 + recs[2].length / 2] ^= 0x5a;  // CRC mismatch
  seg.replace(recs[5].offset, 4, "XXXX");                 // lost sync
  seg.resize(recs[9].offset + 20 + recs[9].length / 2);   // torn tail
  ASSERT_TRUE(WriteFile(segments[0], seg).ok());
  std::set<uint64_t> intact;
  for (const Record& r : recs) {
    if (r.seq != flipped && r.seq != unmagic && r.seq != truncated)
      intact.insert(r.seq);
  }

  // 3. Server up; the agent restarts, makes 3 more reports and flushes.
  auto server = StartServerAt(data, "127.0.0.1:0", logs + "/server.log");
  ASSERT_TRUE(server.ok()) << server.status();
  agent = StartAgent("fgraph-active-6.19", server->grpc_address, state,
                     "spool-1", absl::Milliseconds(100), logs + "/agent2.log",
                     {"--max_reports=3", "--shutdown_flush_timeout=30s"});
  ASSERT_TRUE(agent.ok()) << agent.status();
  rc = (*agent)->Wait(absl::Seconds(60));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_EQ(*rc, 0) << *ReadFile(logs + "/agent2.log");
  auto run2 = ParseAgentLog(*ReadFile(logs + "/agent2.log"));
  ASSERT_TRUE(run2.ok()) << run2.status();
  EXPECT_EQ(run2->left, 0u);
  EXPECT_GT(run2->first, run1->last);

  auto seqs = StoredSeqs(db, "spool-1");
  ASSERT_TRUE(seqs.ok()) << seqs.status();
  std::set<uint64_t> expected = intact;
  for (uint64_t s = run2->first; s <= run2->last; ++s) expected.insert(s);
  std::vector<uint64_t> want(expected.begin(), expected.end());
  EXPECT_EQ(*seqs, want) << "stored " << absl::StrJoin(*seqs, ",") << " want "
                         << absl::StrJoin(want, ",");

  // The last report counts the damaged records.
  auto blob = StoredReport(db, "spool-1", run2->last);
  ASSERT_TRUE(blob.ok()) << blob.status();
  v1::HostReport last;
  ASSERT_TRUE(last.ParseFromString(*blob));
  EXPECT_GE(last.health().spool_corrupt_total(), 3u);
  std::printf(
      "spool: 10 spooled, 3 damaged (seq %llu flipped, %llu magic, %llu torn); "
      "stored %zu (%zu intact + %llu new), spool_corrupt_total=%llu\n",
      static_cast<unsigned long long>(flipped),
      static_cast<unsigned long long>(unmagic),
      static_cast<unsigned long long>(truncated), seqs->size(), intact.size(),
      static_cast<unsigned long long>(run2->reports),
      static_cast<unsigned long long>(last.health().spool_corrupt_total()));
  ASSERT_TRUE(server->process->Signal(SIGTERM).ok());
  ASSERT_TRUE(server->process->Wait(absl::Seconds(30)).ok());
}

}  // namespace
}  // namespace tracehealth::testing
