// tracehealth-loadgen holding its streams open (idle, like agents between
// reports) while the server it streams to is killed: it says the streams
// failed with the server's status and exits 1, instead of aborting ("pure
// virtual method called") when it later closes the dead calls.
#include <csignal>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/server/server_process.h"
#include "tests/util/eventually.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

// Reports the server stored, -1 when /metrics cannot be read.
double Stored(const std::string& addr) {
  absl::StatusOr<std::string> m = HttpGet(addr, "/metrics");
  if (!m.ok()) return -1;
  const std::string key =
      "\ntracehealth_ingest_reports_total{result=\"stored\"} ";
  size_t at = m->find(key);
  if (at == std::string::npos) return -1;
  double v = -1;
  const std::string rest = m->substr(at + key.size());
  if (!absl::SimpleAtod(rest.substr(0, rest.find('\n')), &v)) return -1;
  return v;
}

TEST(LoadgenServerGoneTest, ReportsTheFailedStreamsAndExitsOne) {
  const std::string dir = NewTempDir("loadgen-gone");
  auto sp = StartServer(dir);
  ASSERT_TRUE(sp.ok()) << sp.status();
  // 6 hosts over 2 channels, one report each, then idle for up to 60 s.
  const std::string log = dir + "/loadgen.log";
  auto load = Subprocess::Start(
      {Runfile("tools/loadgen/tracehealth-loadgen"),
       "--server=" + sp->grpc_addr, "--hosts=6", "--channels=2",
       "--reports_per_host=1", "--hold_open", "--seconds=60"},
      log);
  ASSERT_TRUE(load.ok()) << load.status();
  // 6 hosts x 1 report = 6 stored: every stream is open and idle.
  ASSERT_TRUE(Eventually([&] { return Stored(sp->metrics_addr) == 6; },
                         absl::Seconds(60)))
      << *ReadFile(log);
  ASSERT_TRUE(sp->process->Signal(SIGKILL).ok());
  (void)sp->process->Wait(absl::Seconds(10));
  // Well before --seconds=60 ends: the streams ended with the server.
  absl::StatusOr<int> rc = (*load)->Wait(absl::Seconds(30));
  ASSERT_TRUE(rc.ok()) << rc.status() << "\n" << *ReadFile(log);
  const std::string out = *ReadFile(log);
  EXPECT_EQ(*rc, 1) << out;
  EXPECT_FALSE(absl::StrContains(out, "pure virtual")) << out;
  EXPECT_TRUE(absl::StrContains(out,
                                "sent=6 acked=6 rejected=0 "
                                "failed_streams=6"))
      << out;
  EXPECT_TRUE(absl::StrContains(
      out, "tracehealth-loadgen: 6 of 6 streams failed, first: UNAVAILABLE: "))
      << out;
}

}  // namespace
}  // namespace tracehealth::testing
