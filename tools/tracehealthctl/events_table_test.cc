#include "tools/tracehealthctl/events_table.h"

#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

TEST(EventsTableTest, RequestFromFlags) {
  auto req = EventsRequest("h1", "no", absl::Hours(24), 5, kNow);
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->host_id(), "h1");
  EXPECT_EQ(req->predicted(), v1::EVENT_PREDICTION_NO);
  EXPECT_EQ(req->from().seconds(), 1'700'000'000 - 86'400);
  EXPECT_EQ(req->to().seconds(), 1'700'000'000);
  EXPECT_EQ(req->limit(), 5u);
  req = EventsRequest("", "", absl::Seconds(1), 0, kNow);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->predicted(), v1::EVENT_PREDICTION_UNSPECIFIED);
  EXPECT_EQ(req->limit(), 0u);  // the server's default

  auto bad = EventsRequest("", "maybe", absl::Hours(1), 0, kNow);
  EXPECT_EQ(bad.status().message(),
            "--predicted=maybe: want yes, no or unknown");
  bad = EventsRequest("", "yes", absl::ZeroDuration(), 0, kNow);
  EXPECT_EQ(bad.status().message(), "--since=0: want a positive duration");
}

TEST(EventsTableTest, OneRowPerEvent) {
  v1::ListEventsResponse resp;
  v1::StoredEvent* e = resp.add_events();
  e->set_host_id("db-7");
  v1::ObservedEvent* ev = e->mutable_event();
  ev->mutable_logged_at()->set_seconds(1'700'000'000 - 90);
  ev->set_kind(v1::OBSERVED_EVENT_KIND_RCU_STALL);
  ev->set_rcu_flavor(v1::RCU_FLAVOR_SCHED);
  ev->set_rcu_self_detected(true);
  ev->set_cpu(0);
  ev->set_stall_jiffies(21000);
  ev->set_comm("bpftrace");
  ev->set_pid(160141);
  ev->set_model(v1::EVENT_MODEL_FGRAPH_ATTACH);
  ev->add_frames("register_ftrace_graph+0x3d7/0x6c0");
  e->set_predicted(v1::EVENT_PREDICTION_NO);
  e->set_predicted_risk(v1::RISK_LATENCY);
  e->set_prediction_seq(11);
  v1::StoredEvent* u = resp.add_events();
  u->set_host_id("web-1");
  u->mutable_event()->mutable_logged_at()->set_seconds(1'700'000'000 - 3600);
  u->mutable_event()->set_kind(v1::OBSERVED_EVENT_KIND_HUNG_TASK);
  u->mutable_event()->set_seconds(122);
  u->set_predicted(v1::EVENT_PREDICTION_UNKNOWN);
  std::ostringstream out;
  PrintEvents(resp, out);
  // Column widths: the widest cell plus two spaces. LOGGED 19 + 2, HOST
  // "web-1" 5 + 2, EVENT the RCU stall's 78 + 2, MODEL "fgraph" 6 + 2,
  // PREDICTED "no (latency, seq 11)" 20 + 2; FRAME is last, unpadded.
  auto pad = [](const std::string& cell, size_t width) {
    return cell + std::string(width + 2 - cell.size(), ' ');
  };
  const std::string rcu =
      "RCU stall (rcu_sched, self-detected), CPU 0, t=21000 jiffies, "
      "bpftrace[160141]";
  ASSERT_EQ(rcu.size(), 78u);
  EXPECT_EQ(out.str(),
            pad("LOGGED", 19) + pad("HOST", 5) + pad("EVENT", 78) +
                pad("MODEL", 6) + pad("PREDICTED", 20) + "FRAME\n" +
                // 1700000000 s is 2023-11-14 22:13:20 UTC; 90 s before.
                pad("2023-11-14 22:11:50", 19) + pad("db-7", 5) + pad(rcu, 78) +
                pad("fgraph", 6) + pad("no (latency, seq 11)", 20) +
                "register_ftrace_graph+0x3d7/0x6c0\n" +
                // An hour before; no prediction to name, no frames.
                pad("2023-11-14 21:13:20", 19) + pad("web-1", 5) +
                pad("hung task, blocked 122 s", 78) + pad("none", 6) +
                pad("unknown", 20) + "\n" + "2 event(s)\n");
}

}  // namespace
}  // namespace tracehealth::server
