// End to end: observed kernel events from the agent's kernel log to the
// server's store, metric and query, and tracehealthctl events.
//
// Two agents on fixture hosts report every second to the real server. Once
// each has reported, the test writes the kernel log (ROOT/dev/kmsg, the
// fixtures of tests/fixtures/kmsg renumbered, dated just after the host's
// newest report):
// - preempt-none-6.16-240k (240,000 threads without a shadow stack, every
//   fgraph kind predicted to STALL): seed 000's RCU stall in the kprobe_multi
//   attach (predicted: yes), a KASAN purge soft lockup (this kernel has no
//   KASAN_VMALLOC: unknown), a hung task in the journal (unattributed:
//   unknown), and two garbage records (skipped);
// - fgraph-active-6.19 (fgraph already active: no walk, no stall
//   predicted): a soft lockup in alloc_retstack_tasklist (a model miss: no).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/agent/fixture_util.h"
#include "tests/server/server_process.h"
#include "tests/util/eventually.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

// The records of `logs` with sequence numbers from `first_seq` and
// timestamps from `ts_usec`, one microsecond apart, as one kernel log
// (dictionary lines kept as they are).
std::string Renumber(const std::vector<std::string>& logs, uint64_t first_seq,
                     uint64_t ts_usec) {
  std::string out;
  uint64_t seq = first_seq;
  for (const std::string& log : logs) {
    for (absl::string_view line : absl::StrSplit(log, '\n')) {
      if (line.empty()) continue;
      if (line[0] == ' ') {
        absl::StrAppend(&out, line, "\n");
        continue;
      }
      std::vector<absl::string_view> f =
          absl::StrSplit(line, absl::MaxSplits(',', 3));
      if (f.size() < 4) {
        absl::StrAppend(&out, line, "\n");
        continue;
      }
      absl::StrAppend(&out, f[0], ",", seq++, ",", ts_usec++, ",", f[3], "\n");
    }
  }
  return out;
}

std::string Fixture(const std::string& name) {
  absl::StatusOr<std::string> s =
      ReadFile(Runfile("tests/fixtures/kmsg/" + name));
  EXPECT_TRUE(s.ok()) << name;
  return s.value_or("");
}

class Host {
 public:
  Host(const std::string& fixture, const std::string& host_id,
       const std::string& dir, const std::string& server)
      : root_(CopyFixture(fixture)), id_(host_id) {
    std::filesystem::create_directories(root_ + "/dev");
    auto p = Subprocess::Start(
        {Runfile("agent/tracehealth-agent"), "--root=" + root_,
         "--state_dir=" + dir + "/" + host_id, "--server=" + server,
         "--host_id=" + host_id, "--interval=1s", "--local_socket=none"},
        dir + "/" + host_id + ".log");
    EXPECT_TRUE(p.ok()) << p.status();
    if (p.ok()) agent_ = *std::move(p);
  }
  const std::string& root() const { return root_; }
  const std::string& id() const { return id_; }

 private:
  std::string root_;
  std::string id_;
  std::unique_ptr<Subprocess> agent_;
};

// The host's boot time (/proc/stat btime).
int64_t Btime(const Host& h) {
  absl::StatusOr<std::string> stat = ReadFile(h.root() + "/proc/stat");
  int64_t btime = 0;
  for (absl::string_view line : absl::StrSplit(stat.value_or(""), '\n')) {
    if (absl::ConsumePrefix(&line, "btime ")) {
      EXPECT_TRUE(absl::SimpleAtoi(line, &btime)) << line;
    }
  }
  EXPECT_GT(btime, 0);
  return btime;
}

// The kernel log, its records dated from `at` on.
void WriteLog(const Host& h, const std::vector<std::string>& logs,
              absl::Time at) {
  const uint64_t ts = static_cast<uint64_t>(
      absl::ToInt64Microseconds(at - absl::FromUnixSeconds(Btime(h))));
  ASSERT_TRUE(WriteFile(h.root() + "/dev/kmsg", Renumber(logs, 100, ts)).ok());
}

std::string Ctl(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      Runfile("tools/tracehealthctl/tracehealthctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = dir + "/ctl.out";
  auto p = Subprocess::Start(argv, log);
  if (!p.ok()) return "";
  auto rc = (*p)->Wait(absl::Seconds(30));
  EXPECT_TRUE(rc.ok() && *rc == 0) << ReadFile(log).value_or("");
  return ReadFile(log).value_or("");
}

// The value of `series` (name and labels, exactly as exposed) in /metrics.
std::string Metric(const ServerProcess& sp, const std::string& series) {
  absl::StatusOr<std::string> body = HttpGet(sp.metrics_addr, "/metrics");
  if (!body.ok()) return "";
  for (absl::string_view line : absl::StrSplit(*body, '\n')) {
    if (absl::ConsumePrefix(&line, series + " ")) return std::string(line);
  }
  return "";
}

TEST(EventsEndToEndTest, EventsAreAttributedComparedCountedAndListed) {
  const std::string dir = NewTempDir("events-e2e");
  std::filesystem::create_directories(dir + "/server");
  absl::StatusOr<ServerProcess> sp = StartServer(dir + "/server");
  ASSERT_TRUE(sp.ok()) << sp.status();
  auto stub = v1::FleetQuery::NewStub(
      grpc::CreateChannel(sp->grpc_addr, grpc::InsecureChannelCredentials()));
  Host lockup("preempt-none-6.16-240k", "none-host", dir, sp->grpc_addr);
  Host active("fgraph-active-6.19", "active-host", dir, sp->grpc_addr);

  // Both have reported (without a kernel log yet). Their kernel logs are
  // dated just after the newest report: that report's prediction is the
  // one current when the kernel logged them.
  std::map<std::string, absl::Time> observed;
  for (const Host* h : {&lockup, &active}) {
    ASSERT_TRUE(Eventually(
        [&] {
          grpc::ClientContext ctx;
          v1::GetHostRequest req;
          req.set_host_id(h->id());
          v1::HostState state;
          if (!stub->GetHost(&ctx, req, &state).ok()) return false;
          observed[h->id()] =
              absl::FromUnixSeconds(state.latest().observed_at().seconds()) +
              absl::Nanoseconds(state.latest().observed_at().nanos());
          return state.latest().health().kmsg().error() ==
                 "/dev/kmsg: No such file or directory";
        },
        absl::Seconds(60)))
        << h->id() << ": "
        << ReadFile(dir + "/" + h->id() + ".log").value_or("");
  }
  WriteLog(lockup,
           {Fixture("seed000_rcu_stall"), Fixture("soft_lockup_vmap_purge"),
            Fixture("hung_task_unattributed"),
            "6,1,1,-;" + std::string(9000, 'A') + "\nnot a record\n"},
           observed["none-host"] + absl::Milliseconds(1));
  WriteLog(active, {Fixture("soft_lockup_fgraph")},
           observed["active-host"] + absl::Milliseconds(1));

  v1::ListEventsResponse events;
  ASSERT_TRUE(Eventually(
      [&] {
        grpc::ClientContext ctx;
        events.Clear();
        return stub->ListEvents(&ctx, v1::ListEventsRequest(), &events).ok() &&
               events.events_size() == 4;
      },
      absl::Seconds(60)))
      << events.DebugString();
  std::map<std::string, const v1::StoredEvent*> by;  // host/kind
  for (const v1::StoredEvent& e : events.events()) {
    by[absl::StrCat(e.host_id(), "/",
                    v1::ObservedEventKind_Name(e.event().kind()), "/",
                    v1::EventModel_Name(e.event().model()))] = &e;
  }
  const v1::StoredEvent* rcu =
      by["none-host/OBSERVED_EVENT_KIND_RCU_STALL/EVENT_MODEL_FGRAPH_ATTACH"];
  ASSERT_NE(rcu, nullptr) << events.DebugString();
  EXPECT_EQ(rcu->predicted(), v1::EVENT_PREDICTION_YES);
  EXPECT_EQ(rcu->predicted_risk(), v1::RISK_STALL);
  EXPECT_EQ(rcu->event().comm(), "bpftrace");
  EXPECT_EQ(rcu->event().stall_jiffies(), 21000u);
  // Records 100.. : the attaching line is 100, the stall's header 101.
  EXPECT_EQ(rcu->event().kmsg_seq(), 101u);
  const v1::StoredEvent* vmap =
      by["none-host/OBSERVED_EVENT_KIND_SOFT_LOCKUP/EVENT_MODEL_VMAP_PURGE"];
  ASSERT_NE(vmap, nullptr) << events.DebugString();
  EXPECT_EQ(vmap->predicted(), v1::EVENT_PREDICTION_UNKNOWN);
  const v1::StoredEvent* hung =
      by["none-host/OBSERVED_EVENT_KIND_HUNG_TASK/EVENT_MODEL_UNATTRIBUTED"];
  ASSERT_NE(hung, nullptr) << events.DebugString();
  EXPECT_EQ(hung->predicted(), v1::EVENT_PREDICTION_UNKNOWN);
  EXPECT_EQ(hung->event().seconds(), 120u);
  const v1::StoredEvent* miss = by
      ["active-host/OBSERVED_EVENT_KIND_SOFT_LOCKUP/EVENT_MODEL_FGRAPH_ATTACH"];
  ASSERT_NE(miss, nullptr) << events.DebugString();
  EXPECT_EQ(miss->predicted(), v1::EVENT_PREDICTION_NO);
  // The outermost fgraph frame: the attach that started the walk.
  EXPECT_EQ(miss->event().matched_symbol(), "bpf_kprobe_multi_link_attach");

  // The counter: one event per series, each once however many reports
  // follow.
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Metric(*sp,
                   "tracehealth_observed_events_total{kind=\"rcu_stall\","
                   "model=\"fgraph\",predicted=\"yes\"}"),
            "1");
  EXPECT_EQ(Metric(*sp,
                   "tracehealth_observed_events_total{kind=\"soft_"
                   "lockup\",model=\"fgraph\",predicted=\"no\"}"),
            "1");
  EXPECT_EQ(Metric(*sp,
                   "tracehealth_observed_events_total{kind=\"soft_"
                   "lockup\",model=\"vmap\",predicted=\"unknown\"}"),
            "1");
  EXPECT_EQ(Metric(*sp,
                   "tracehealth_observed_events_total{kind=\"hung_task\","
                   "model=\"none\",predicted=\"unknown\"}"),
            "1");

  // The skipped records are in the agent's health.
  grpc::ClientContext ctx;
  v1::GetHostRequest req;
  req.set_host_id("none-host");
  v1::HostState state;
  ASSERT_TRUE(stub->GetHost(&ctx, req, &state).ok());
  EXPECT_EQ(state.latest().health().kmsg().oversized_total(), 1u);
  EXPECT_EQ(state.latest().health().kmsg().malformed_total(), 1u);
  EXPECT_EQ(state.latest().health().kmsg().events_total(), 3u);

  // tracehealthctl: the misses only.
  const std::string out =
      Ctl(dir, {"--server=" + sp->grpc_addr, "events", "--predicted=no"});
  EXPECT_TRUE(absl::StrContains(out, "active-host")) << out;
  EXPECT_TRUE(absl::StrContains(out,
                                "soft lockup, CPU#5 stuck 22 s, "
                                "bpftrace[4242]"))
      << out;
  EXPECT_FALSE(absl::StrContains(out, "none-host")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\n1 event(s)\n")) << out;
}

}  // namespace
}  // namespace tracehealth::testing
