#include "agent/uplink/heartbeat_former.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);

server::SampleHost Host() {
  server::SampleHost h;
  h.host_id = "web-1";
  h.threads = 100000;
  return h;
}

// What the former makes of the report of `host` with `seq`, observed at
// `at`: the base_seq it names (0: whole, marked), or -1 whole unmarked.
int64_t Send(HeartbeatFormer& f, const server::SampleHost& host, uint64_t seq,
             absl::Time at) {
  v1::HostReport r = server::SampleReport(host, seq, at);
  const std::string wire = r.SerializeAsString();
  const bool form = f.Form(wire, &r);
  EXPECT_EQ(form, r.heartbeat().base_seq() > 0);
  EXPECT_EQ(r.seq(), seq);
  if (form) {
    // The form carries no kernel; a whole report keeps its snapshot.
    EXPECT_FALSE(r.snapshot().has_kernel());
  } else {
    EXPECT_TRUE(r.snapshot().has_kernel());
  }
  if (!r.has_heartbeat()) return -1;
  return static_cast<int64_t>(r.heartbeat().base_seq());
}

TEST(HeartbeatFormerTest, FirstWholeThenFormsOnIt) {
  HeartbeatFormer f(absl::Hours(6));
  EXPECT_EQ(Send(f, Host(), 10, kT0), 0);
  EXPECT_EQ(Send(f, Host(), 11, kT0 + absl::Seconds(15)), 10);
  EXPECT_EQ(Send(f, Host(), 12, kT0 + absl::Seconds(30)), 10);
}

TEST(HeartbeatFormerTest, WholeAgainAtTheInterval) {
  HeartbeatFormer f(absl::Hours(6));
  EXPECT_EQ(Send(f, Host(), 1, kT0), 0);
  EXPECT_EQ(Send(f, Host(), 2, kT0 + absl::Hours(6) - absl::Nanoseconds(1)), 1);
  EXPECT_EQ(Send(f, Host(), 3, kT0 + absl::Hours(6)), 0);
  EXPECT_EQ(Send(f, Host(), 4, kT0 + absl::Hours(6) + absl::Seconds(1)), 3);
}

TEST(HeartbeatFormerTest, AMaterialChangeGoesWholeAndIsTheNewBase) {
  HeartbeatFormer f(absl::Hours(6));
  server::SampleHost h = Host();
  EXPECT_EQ(Send(f, h, 1, kT0), 0);
  h.kernel_release = "6.19.2";
  EXPECT_EQ(Send(f, h, 2, kT0 + absl::Seconds(15)), 0);
  EXPECT_EQ(Send(f, h, 3, kT0 + absl::Seconds(30)), 2);
  // Back to the first kernel: a change from the base (2), whole again.
  EXPECT_EQ(Send(f, Host(), 4, kT0 + absl::Seconds(45)), 0);
}

TEST(HeartbeatFormerTest, PredictionNumbersCountBeyondTheTolerance) {
  HeartbeatFormer f(absl::Hours(6));
  server::SampleHost h = Host();
  EXPECT_EQ(Send(f, h, 1, kT0), 0);
  // 1 % more threads: the quadratic walk about 2 % longer, within 5 %.
  h.threads = 101000;
  EXPECT_EQ(Send(f, h, 2, kT0 + absl::Seconds(15)), 1);
  // 20 % more: about 44 % longer, beyond it.
  h.threads = 120000;
  EXPECT_EQ(Send(f, h, 3, kT0 + absl::Seconds(30)), 0);
}

TEST(HeartbeatFormerTest, ASeqNotAboveTheBaseGoesWhole) {
  HeartbeatFormer f(absl::Hours(6));
  EXPECT_EQ(Send(f, Host(), 5, kT0), 0);
  EXPECT_EQ(Send(f, Host(), 5, kT0 + absl::Seconds(15)), 0);
  EXPECT_EQ(Send(f, Host(), 6, kT0 + absl::Seconds(30)), 5);
}

TEST(HeartbeatFormerTest, ResetSendsTheNextWhole) {
  HeartbeatFormer f(absl::Hours(6));
  EXPECT_EQ(Send(f, Host(), 1, kT0), 0);
  f.Reset();
  EXPECT_EQ(Send(f, Host(), 2, kT0 + absl::Seconds(15)), 0);
  EXPECT_EQ(Send(f, Host(), 3, kT0 + absl::Seconds(30)), 2);
}

TEST(HeartbeatFormerTest, ZeroIntervalSendsEverythingWholeUnmarked) {
  HeartbeatFormer f(absl::ZeroDuration());
  EXPECT_EQ(Send(f, Host(), 1, kT0), -1);
  EXPECT_EQ(Send(f, Host(), 2, kT0 + absl::Seconds(15)), -1);
}

}  // namespace
}  // namespace tracehealth::agent
