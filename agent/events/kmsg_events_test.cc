#include "agent/events/kmsg_events.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/state/state_file.h"
#include "agent/testing/test_tmp.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr int64_t kBtime = 1795900000;
constexpr char kBootId[] = "6f0b7c1e-2d4a-4e59-9a51-0c8d2f1e7a10";

// A soft lockup in the fgraph walk at `seq` (4 records: seq .. seq + 3).
std::string Lockup(uint64_t seq, uint64_t ts_usec, uint32_t seconds) {
  return absl::StrCat(
      "0,", seq, ",", ts_usec, ",-;watchdog: BUG: soft lockup - CPU#5 stuck ",
      "for ", seconds, "s! [bpftrace:4242]\n",      //
      "4,", seq + 1, ",", ts_usec, ",-; <TASK>\n",  //
      "4,", seq + 2, ",", ts_usec, ",-; alloc_retstack_tasklist+0x5a/0x1f0\n",
      "4,", seq + 3, ",", ts_usec, ",-; </TASK>\n");
}

std::string Line(uint64_t seq, const std::string& text) {
  return absl::StrCat("6,", seq, ",", seq * 1000, ",-;", text, "\n");
}

class KmsgEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = TestTempDir("host");
    state_ = TestTempDir("state");
    for (const char* d : {"/dev", "/proc", "/proc/sys", "/proc/sys/kernel",
                          "/proc/sys/kernel/random"}) {
      mkdir((root_ + d).c_str(), 0755);
    }
    std::ofstream(root_ + "/proc/stat")
        << "cpu  1 2 3 4\nbtime " << kBtime << "\nprocesses 9\n";
    std::ofstream(root_ + "/proc/sys/kernel/random/boot_id") << kBootId << "\n";
  }
  void Log(const std::string& records) {
    std::ofstream(root_ + "/dev/kmsg", std::ios::app) << records;
  }
  KmsgEventsOptions Options(size_t per_report = 16) {
    KmsgEventsOptions o;
    o.state_dir = state_;
    o.max_events_per_report = per_report;
    return o;
  }
  static std::vector<uint64_t> Seqs(const v1::HostReport& r) {
    std::vector<uint64_t> out;
    for (const auto& e : r.observed_events()) out.push_back(e.kmsg_seq());
    return out;
  }
  std::string root_, state_;
};

TEST_F(KmsgEventsTest, EventsAreDatedAndNamedByTheirBoot) {
  Log(Line(1, "Linux version 6.16.12") + Lockup(2, 84200123456, 22) +
      "garbage\n");
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r;
  events.Fill(&r);
  ASSERT_EQ(r.observed_events_size(), 1);
  const v1::ObservedEvent& e = r.observed_events(0);
  EXPECT_EQ(e.boot_id(), kBootId);
  EXPECT_EQ(e.kmsg_seq(), 2u);
  // btime + 84200.123456 s.
  EXPECT_EQ(e.logged_at().seconds(), kBtime + 84200);
  EXPECT_EQ(e.logged_at().nanos(), 123456000);
  EXPECT_EQ(e.seconds(), 22u);
  EXPECT_EQ(e.model(), v1::EVENT_MODEL_FGRAPH_ATTACH);
  const v1::KmsgHealth& h = r.health().kmsg();
  EXPECT_EQ(h.records_total(), 5u);  // 1 + 4; the garbage is skipped
  EXPECT_EQ(h.malformed_total(), 1u);
  EXPECT_EQ(h.events_total(), 1u);
  EXPECT_EQ(h.events_pending(), 0u);
  EXPECT_EQ(h.last_seq(), 5u);
  EXPECT_EQ(h.error(), "");
}

TEST_F(KmsgEventsTest, AtMostNPerReportTheRestInTheNext) {
  Log(Lockup(10, 1000, 22) + Lockup(20, 2000, 48) + Lockup(30, 3000, 74));
  HostFs fs(root_);
  KmsgEvents events(&fs, Options(2));
  v1::HostReport r1;
  events.Fill(&r1);
  EXPECT_EQ(Seqs(r1), (std::vector<uint64_t>{10, 20}));
  EXPECT_EQ(r1.health().kmsg().events_pending(), 1u);
  events.Delivered();
  v1::HostReport r2;
  events.Fill(&r2);
  EXPECT_EQ(Seqs(r2), (std::vector<uint64_t>{30}));
  EXPECT_EQ(r2.health().kmsg().events_pending(), 0u);
  events.Delivered();
  v1::HostReport r3;
  events.Fill(&r3);
  EXPECT_TRUE(r3.observed_events().empty());
}

TEST_F(KmsgEventsTest, AReportNotDeliveredLeavesItsEventsForTheNext) {
  Log(Lockup(10, 1000, 22));
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r1, r2;
  events.Fill(&r1);  // e.g. the spool refused it
  events.Fill(&r2);
  EXPECT_EQ(Seqs(r1), (std::vector<uint64_t>{10}));
  EXPECT_EQ(Seqs(r2), (std::vector<uint64_t>{10}));
}

TEST_F(KmsgEventsTest, ARestartGoesOnAfterWhatWasDelivered) {
  Log(Lockup(10, 1000, 22));
  {
    HostFs fs(root_);
    KmsgEvents events(&fs, Options());
    v1::HostReport r;
    events.Fill(&r);
    EXPECT_EQ(Seqs(r), (std::vector<uint64_t>{10}));
    events.Delivered();
  }
  auto kv = ReadKeyValueFile(state_ + "/kmsg_cursor");
  ASSERT_TRUE(kv.ok() && kv->has_value());
  EXPECT_EQ((**kv)["seq"], "13");
  // Logged while the agent was down, and seq 14 overwritten before it came
  // back: reported by the first report, one record lost.
  Log(Lockup(15, 5000, 22));
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r;
  events.Fill(&r);
  EXPECT_EQ(Seqs(r), (std::vector<uint64_t>{15}));
  EXPECT_EQ(r.health().kmsg().lost_total(), 1u);
  EXPECT_EQ(r.health().kmsg().records_total(), 4u);
}

TEST_F(KmsgEventsTest, ARestartBeforeDeliveryReportsTheEventsAgain) {
  Log(Lockup(10, 1000, 22) + Line(14, "after"));
  {
    HostFs fs(root_);
    KmsgEvents events(&fs, Options());
    v1::HostReport r;
    events.Fill(&r);
    EXPECT_EQ(Seqs(r), (std::vector<uint64_t>{10}));
    // Stopped before the report was spooled.
  }
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r;
  events.Fill(&r);
  EXPECT_EQ(Seqs(r), (std::vector<uint64_t>{10}));
}

TEST_F(KmsgEventsTest, TheCursorStopsBeforeAnEventStillBeingLogged) {
  // The header and one frame are in; the rest of the dump is not yet.
  Log(Line(1, "boot") +
      "0,2,2000,-;watchdog: BUG: soft lockup - CPU#5 stuck for 22s! "
      "[bpftrace:4242]\n4,3,2000,-; <TASK>\n");
  {
    HostFs fs(root_);
    KmsgEvents events(&fs, Options());
    v1::HostReport r;
    events.Fill(&r);
    EXPECT_TRUE(r.observed_events().empty());
    events.Delivered();
  }
  auto kv = ReadKeyValueFile(state_ + "/kmsg_cursor");
  ASSERT_TRUE(kv.ok() && kv->has_value());
  EXPECT_EQ((**kv)["seq"], "1");
  // The restarted agent reads the dump again from its header, with the
  // frames logged since.
  Log("4,4,2000,-; alloc_retstack_tasklist+0x5a/0x1f0\n4,5,2000,-; </TASK>\n");
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r;
  events.Fill(&r);
  ASSERT_EQ(Seqs(r), (std::vector<uint64_t>{2}));
  EXPECT_EQ(r.observed_events(0).frames_size(), 1);
  EXPECT_EQ(r.observed_events(0).model(), v1::EVENT_MODEL_FGRAPH_ATTACH);
}

TEST_F(KmsgEventsTest, ALogOfAnotherBootIsReadFromItsStart) {
  {
    KmsgCursor c(state_);
    BootIdentity old_boot;
    old_boot.boot_id = "0d7e3b9a-1c2f-4a6b-8e5d-93f1a2b4c6d8";
    old_boot.btime = kBtime - 86400;
    ASSERT_TRUE(c.Save(old_boot, 500).ok());
  }
  Log(Lockup(10, 1000, 22));
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r;
  events.Fill(&r);
  EXPECT_EQ(Seqs(r), (std::vector<uint64_t>{10}));
  EXPECT_EQ(r.health().kmsg().lost_total(), 0u);
}

TEST_F(KmsgEventsTest, ReadingWaitsWhileTooManyEventsWait) {
  std::string log;
  for (uint64_t i = 0; i < 5; ++i) log += Lockup(10 * (i + 1), i, 22);
  Log(log);
  HostFs fs(root_);
  KmsgEventsOptions o = Options(1);
  o.max_pending = 2;
  KmsgEvents events(&fs, o);
  std::vector<uint64_t> reported;
  for (int cycle = 0; cycle < 6; ++cycle) {
    v1::HostReport r;
    events.Fill(&r);
    EXPECT_LE(r.observed_events_size(), 1);
    EXPECT_LE(r.health().kmsg().events_pending(), 1u);
    for (uint64_t s : Seqs(r)) reported.push_back(s);
    events.Delivered();
  }
  EXPECT_EQ(reported, (std::vector<uint64_t>{10, 20, 30, 40, 50}));
}

TEST_F(KmsgEventsTest, NoLogSaysSoWithoutAWarning) {
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r;
  events.Fill(&r);
  EXPECT_TRUE(r.observed_events().empty());
  EXPECT_EQ(r.health().kmsg().error(), "/dev/kmsg: No such file or directory");
  EXPECT_FALSE(r.health().kmsg().has_last_seq());
  EXPECT_TRUE(events.TakeWarnings().empty());
}

TEST_F(KmsgEventsTest, WithoutABootIdTheBootIsNamedByItsBtime) {
  ASSERT_EQ(std::remove((root_ + "/proc/sys/kernel/random/boot_id").c_str()),
            0);
  Log(Lockup(10, 1000, 22));
  HostFs fs(root_);
  KmsgEvents events(&fs, Options());
  v1::HostReport r;
  events.Fill(&r);
  ASSERT_EQ(r.observed_events_size(), 1);
  EXPECT_EQ(r.observed_events(0).boot_id(), "btime-1795900000");
}

}  // namespace
}  // namespace tracehealth::agent
