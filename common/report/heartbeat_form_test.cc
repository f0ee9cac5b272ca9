#include "common/report/heartbeat_form.h"

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth {
namespace {

using google::protobuf::TextFormat;
using google::protobuf::util::MessageDifferencer;

v1::HostReport Parse(const char* text) {
  v1::HostReport r;
  EXPECT_TRUE(TextFormat::ParseFromString(text, &r)) << text;
  return r;
}

TEST(HeartbeatFormTest, KeepsExactlyTheFieldsAHeartbeatCarries) {
  const v1::HostReport report = Parse(R"pb(
    host_id: "db-1"
    seq: 42
    observed_at { seconds: 1800000000 nanos: 5 }
    agent_version: "1.2.3"
    model_version: "m7"
    labels { key: "role" value: "db" }
    interval_seconds: 15
    snapshot {
      kernel { release: "6.16.3" }
      threads { total: 120000 running: 3 forks_since_boot: 99 }
    }
    predictions {
      worst_risk: RISK_STALL
      attach {
        probe_kind: PROBE_KIND_FUNCTION_GRAPH_TRACER
        latency_seconds: 9.5
      }
      attach {
        probe_kind: PROBE_KIND_KPROBE_MULTI_RETURN
        latency_seconds: 12.25
        threads_total: 120000
      }
      stack_depot { applies: true budget_ratio: 0.5 }
      vmap_purge { applies: true purge_seconds: 0.75 }
    }
    health { spool_depth: 3 }
    heartbeat {}
  )pb");
  const v1::HostReport want = Parse(R"pb(
    host_id: "db-1"
    seq: 42
    observed_at { seconds: 1800000000 nanos: 5 }
    agent_version: "1.2.3"
    model_version: "m7"
    interval_seconds: 15
    snapshot { threads { total: 120000 } }
    predictions {
      worst_risk: RISK_STALL
      attach {
        probe_kind: PROBE_KIND_KPROBE_MULTI_RETURN
        latency_seconds: 12.25
      }
      stack_depot { budget_ratio: 0.5 }
      vmap_purge { applies: true purge_seconds: 0.75 }
    }
    heartbeat { base_seq: 40 }
  )pb");
  const v1::HostReport got = HeartbeatFormOf(report, 40);
  EXPECT_TRUE(MessageDifferencer::Equals(got, want)) << got.DebugString();
  EXPECT_TRUE(IsHeartbeatForm(got));
  EXPECT_FALSE(IsHeartbeatForm(report));
}

TEST(HeartbeatFormTest, LeavesOutWhatTheReportDoesNotHave) {
  const v1::HostReport report = Parse(R"pb(
    host_id: "h"
    seq: 2
    interval_seconds: 30
    snapshot { threads { running: 1 } }
    predictions {
      worst_risk: RISK_NONE
      attach { probe_kind: PROBE_KIND_FUNCTION_GRAPH_TRACER latency_seconds: 1 }
      stack_depot { applies: false }
    }
  )pb");
  const v1::HostReport want = Parse(R"pb(
    host_id: "h"
    seq: 2
    interval_seconds: 30
    predictions { worst_risk: RISK_NONE }
    heartbeat { base_seq: 1 }
  )pb");
  const v1::HostReport got = HeartbeatFormOf(report, 1);
  EXPECT_TRUE(MessageDifferencer::Equals(got, want)) << got.DebugString();
  EXPECT_FALSE(got.has_snapshot());
  EXPECT_FALSE(got.has_observed_at());
}

TEST(HeartbeatFormTest, ASampleReportsFormIsAFewPercentOfIt) {
  server::SampleHost host;
  host.host_id = "web-17";
  const v1::HostReport report =
      server::SampleReport(host, 9, absl::FromUnixSeconds(1800000000));
  const size_t whole = report.ByteSizeLong();
  const size_t form = HeartbeatFormOf(report, 8).ByteSizeLong();
  // Fields of fixed size, worked out: host_id 8, seq 2, observed_at 8,
  // versions, interval 9, threads 6, predictions about 40, heartbeat 4.
  EXPECT_LT(form, 120u);
  EXPECT_GT(whole, 20 * form) << whole << " vs " << form;
}

}  // namespace
}  // namespace tracehealth
