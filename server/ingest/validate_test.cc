#include "server/ingest/validate.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

v1::HostReport Good() {
  v1::HostReport r;
  r.set_host_id("db-01.example_x");
  r.set_seq(7);
  r.mutable_observed_at()->set_seconds(1800000000 - 30);
  r.set_agent_version("1.0.0");
  r.set_model_version("1.0.0");
  (*r.mutable_labels())["role"] = "db";
  r.set_interval_seconds(30);
  r.mutable_snapshot()->mutable_threads()->set_total(400000);
  r.mutable_snapshot()->mutable_threads()->set_uptime_seconds(1000.5);
  auto* a = r.mutable_predictions()->add_attach();
  a->set_latency_seconds(7.3);
  a->mutable_basis()->set_confidence(0.9);
  r.mutable_predictions()->mutable_stack_depot()->set_growth_pools_per_second(
      -0.5);
  return r;
}

absl::Status CheckWire(const std::string& wire,
                       const ValidationLimits& limits = ValidationLimits()) {
  absl::StatusOr<ReportHead> head = DecodeReportHead(wire);
  if (!head.ok()) return head.status();
  return ValidateReport(*head, wire, kNow, limits);
}

absl::Status Check(const v1::HostReport& r,
                   const ValidationLimits& limits = ValidationLimits()) {
  return CheckWire(r.SerializeAsString(), limits);
}

TEST(ValidateTest, AcceptsAGoodReport) {
  EXPECT_TRUE(Check(Good()).ok()) << Check(Good());
}

// The rule itself is common/host_identity.h's (tested there); reports are
// held to it.
TEST(ValidateTest, HostIdCharsetAndLength) {
  for (const std::string& id :
       {std::string("a"), std::string(253, 'x'), std::string(".a")}) {
    v1::HostReport r = Good();
    r.set_host_id(id);
    EXPECT_TRUE(Check(r).ok()) << id;
  }
  for (const std::string& id :
       {std::string(""), std::string(254, 'x'), std::string("."),
        std::string(".."), std::string("a b"), std::string("a/b")}) {
    v1::HostReport r = Good();
    r.set_host_id(id);
    absl::Status st = Check(r);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << id << ": " << st;
    EXPECT_NE(st.message().find("host_id"), std::string::npos)
        << id << ": " << st;
  }
}

struct BadCase {
  const char* name;
  std::function<void(v1::HostReport&)> mutate;
  const char* expect_in_message;
};

TEST(ValidateTest, RejectsBadInputs) {
  const double kNan = std::nan("");
  const double kInf = std::numeric_limits<double>::infinity();
  std::vector<BadCase> cases = {
      {"empty host", [](auto& r) { r.set_host_id(""); }, "host_id"},
      {"host charset", [](auto& r) { r.set_host_id("db 01"); }, "host_id"},
      {"seq zero", [](auto& r) { r.set_seq(0); }, "seq"},
      {"seq huge", [](auto& r) { r.set_seq(~0ULL); }, "seq"},
      {"no observed_at", [](auto& r) { r.clear_observed_at(); }, "observed_at"},
      {"future",
       [](auto& r) { r.mutable_observed_at()->set_seconds(1800000000 + 7200); },
       "future"},
      {"bad nanos", [](auto& r) { r.mutable_observed_at()->set_nanos(-1); },
       "observed_at"},
      {"ts range",
       [](auto& r) { r.mutable_observed_at()->set_seconds(-99999999999LL); },
       "observed_at"},
      {"label key charset",
       [](auto& r) { (*r.mutable_labels())["bad-key"] = "x"; }, "labels"},
      {"label key digit", [](auto& r) { (*r.mutable_labels())["1abc"] = "x"; },
       "labels"},
      {"label value long",
       [](auto& r) { (*r.mutable_labels())["k"] = std::string(256, 'v'); },
       "labels[k]"},
      {"too many labels",
       [](auto& r) {
         for (int i = 0; i < 65; ++i)
           (*r.mutable_labels())["k" + std::to_string(i)] = "v";
       },
       "labels"},
      {"version long",
       [](auto& r) { r.set_agent_version(std::string(200, 'v')); },
       "agent_version"},
      {"nan interval", [=](auto& r) { r.set_interval_seconds(kNan); },
       "interval_seconds"},
      {"negative interval", [](auto& r) { r.set_interval_seconds(-1); },
       "interval_seconds"},
      {"inf latency",
       [=](auto& r) {
         r.mutable_predictions()->mutable_attach(0)->set_latency_seconds(kInf);
       },
       "predictions.attach.latency_seconds"},
      {"negative uptime",
       [](auto& r) {
         r.mutable_snapshot()->mutable_threads()->set_uptime_seconds(-3);
       },
       "snapshot.threads.uptime_seconds"},
      {"nan confidence",
       [=](auto& r) {
         r.mutable_predictions()
             ->mutable_attach(0)
             ->mutable_basis()
             ->set_confidence(kNan);
       },
       "confidence"},
      {"nan growth",
       [=](auto& r) {
         r.mutable_predictions()
             ->mutable_stack_depot()
             ->set_growth_pools_per_second(kNan);
       },
       "growth_pools_per_second"},
      {"nan health",
       [=](auto& r) { r.mutable_health()->set_cycle_seconds(kNan); },
       "health.cycle_seconds"},
      {"override row release",
       [](auto& r) {
         v1::FeatureRow* row = r.mutable_feature_table_override()->add_rows();
         row->set_name("kasan_flush_combined");
         row->set_since("6.13");
         row->add_backports("six");
       },
       "feature_table_override: feature table row kasan_flush_combined"},
      {"override row name",
       [](auto& r) {
         r.mutable_feature_table_override()->add_rows()->set_since("never");
       },
       "no name"},
      {"too many users",
       [](auto& r) {
         for (int i = 0; i < 4097; ++i)
           r.mutable_snapshot()->mutable_fgraph()->add_users();
       },
       "users"},
  };
  for (const BadCase& c : cases) {
    v1::HostReport r = Good();
    c.mutate(r);
    absl::Status st = Check(r);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << c.name << ": " << st;
    EXPECT_NE(st.message().find(c.expect_in_message), std::string::npos)
        << c.name << ": " << st.message();
  }
}

// The reason of each refusal, exactly, and the accepted side of each bound.
void ExpectRefused(const v1::HostReport& r, const std::string& message) {
  absl::Status st = Check(r);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << message << ": " << st;
  EXPECT_EQ(st.message(), message);
}

TEST(ValidateTest, IntervalMustBeBetweenAMillisecondAndADay) {
  for (double ok : {0.001, 1.0, 15.0, 86400.0}) {
    v1::HostReport r = Good();
    r.set_interval_seconds(ok);
    EXPECT_TRUE(Check(r).ok()) << ok << ": " << Check(r);
  }
  const std::pair<double, const char*> bad[] = {
      {0, "interval_seconds: 0 (must be 0.001 to 86400 s)"},
      {0.0009, "interval_seconds: 0.0009 (must be 0.001 to 86400 s)"},
      {86400.5, "interval_seconds: 86400.5 (must be 0.001 to 86400 s)"},
      {1e300, "interval_seconds: 1e+300 (must be 0.001 to 86400 s)"},
  };
  for (const auto& [value, message] : bad) {
    v1::HostReport r = Good();
    r.set_interval_seconds(value);
    ExpectRefused(r, message);
  }
  v1::HostReport absent = Good();
  absent.clear_interval_seconds();
  ExpectRefused(absent, "interval_seconds: 0 (must be 0.001 to 86400 s)");
}

TEST(ValidateTest, CmdlineIsAtMost4KiB) {
  v1::HostReport r = Good();
  r.mutable_snapshot()->mutable_kernel()->set_cmdline(std::string(4096, 'c'));
  EXPECT_TRUE(Check(r).ok()) << Check(r);
  r.mutable_snapshot()->mutable_kernel()->set_cmdline(std::string(4097, 'c'));
  ExpectRefused(r, "snapshot.kernel.cmdline: 4097 bytes (at most 4096)");
}

TEST(ValidateTest, EnumValuesMustBeDefined) {
  v1::HostReport top = Good();
  top.mutable_predictions()->set_worst_risk(v1::RISK_STALL);  // the highest
  top.mutable_snapshot()->mutable_kernel()->set_preempt_mode(
      v1::PREEMPT_MODE_LAZY);
  EXPECT_TRUE(Check(top).ok()) << Check(top);
  v1::HostReport r = Good();
  r.mutable_predictions()->set_worst_risk(static_cast<v1::Risk>(99));
  ExpectRefused(
      r, "predictions.worst_risk: 99 is not a tracehealth.v1.Risk value");
  r = Good();
  r.mutable_predictions()->set_worst_risk(
      static_cast<v1::Risk>(v1::RISK_STALL + 1));
  ExpectRefused(r, absl::StrCat("predictions.worst_risk: ", v1::RISK_STALL + 1,
                                " is not a tracehealth.v1.Risk value"));
  r = Good();
  r.mutable_snapshot()->mutable_kernel()->set_preempt_mode(
      static_cast<v1::PreemptMode>(-1));
  ExpectRefused(r,
                "snapshot.kernel.preempt_mode: -1 is not a "
                "tracehealth.v1.PreemptMode value");
  r = Good();
  r.mutable_predictions()->mutable_attach(0)->set_probe_kind(
      static_cast<v1::ProbeKind>(1000));
  ExpectRefused(r,
                "predictions.attach.probe_kind: 1000 is not a "
                "tracehealth.v1.ProbeKind value");
}

TEST(ValidateTest, OneAttachPredictionPerProbeKind) {
  // One of each kind is a normal report.
  v1::HostReport each = Good();
  each.mutable_predictions()->clear_attach();
  for (int k = v1::ProbeKind_MIN; k <= v1::ProbeKind_MAX; ++k) {
    each.mutable_predictions()->add_attach()->set_probe_kind(
        static_cast<v1::ProbeKind>(k));
  }
  EXPECT_TRUE(Check(each).ok()) << Check(each);
  // 201 copies of one kind.
  v1::HostReport r = Good();
  r.mutable_predictions()->clear_attach();
  for (int i = 0; i < 201; ++i) {
    r.mutable_predictions()->add_attach()->set_probe_kind(
        v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  }
  ExpectRefused(r,
                "predictions.attach: 201 entries for probe_kind "
                "PROBE_KIND_KPROBE_MULTI_RETURN (at most one per kind)");
  // Two, among others.
  each.mutable_predictions()->add_attach()->set_probe_kind(
      v1::PROBE_KIND_FENTRY_FEXIT);
  ExpectRefused(each,
                "predictions.attach: 2 entries for probe_kind "
                "PROBE_KIND_FENTRY_FEXIT (at most one per kind)");
}

TEST(ValidateTest, AcceptsAFeatureTableOverride) {
  v1::HostReport r = Good();
  r.mutable_feature_table_override()->set_digest("sha256:00");
  v1::FeatureRow* row = r.mutable_feature_table_override()->add_rows();
  row->set_name("kasan_flush_combined");
  row->set_since("never");
  row->add_backports("6.12.2");
  EXPECT_TRUE(Check(r).ok()) << Check(r);
}

TEST(ValidateTest, RejectsOversizedReport) {
  ValidationLimits limits;
  limits.max_report_bytes = 100;
  v1::HostReport r = Good();
  r.mutable_snapshot()->mutable_kernel()->set_cmdline(std::string(200, 'c'));
  absl::Status st = Check(r, limits);
  EXPECT_TRUE(absl::IsInvalidArgument(st));
  EXPECT_NE(st.message().find("bytes"), std::string::npos);
}

// Bytes that do not decode are DataLoss (the stream ends), not a rejection.
TEST(ValidateTest, MalformedWireBytesAreDataLoss) {
  v1::HostReport r = Good();
  std::string wire = r.SerializeAsString();
  EXPECT_TRUE(absl::IsDataLoss(CheckWire(wire.substr(0, wire.size() - 3))));
  EXPECT_TRUE(absl::IsDataLoss(CheckWire(wire + "\x0f")));  // wire type 7
  // Invalid UTF-8 deep inside: the head decodes, the walk does not accept it.
  r.mutable_snapshot()->mutable_kernel()->set_release("6.1\xff");
  EXPECT_TRUE(absl::IsDataLoss(CheckWire(r.SerializeAsString())));
}

TEST(ValidateTest, LabelCountIncludesRepeatedKeys) {
  ValidationLimits limits;
  limits.max_labels = 2;
  v1::HostReport r = Good();
  std::string wire = r.SerializeAsString();
  ASSERT_TRUE(CheckWire(wire, limits).ok());
  v1::HostReport again;
  (*again.mutable_labels())["role"] = "web";
  EXPECT_TRUE(absl::IsInvalidArgument(CheckWire(
      wire + again.SerializeAsString() + again.SerializeAsString(), limits)));
}

// google.protobuf.Timestamp's range on both sides: seconds from
// 0001-01-01T00:00:00Z (-62,135,596,800) to 9999-12-31T23:59:59Z
// (253,402,300,799), nanos 0 to 999,999,999.
TEST(ValidateTest, TimestampRangeOnBothSides) {
  v1::HostReport r = Good();
  r.mutable_observed_at()->set_nanos(999999999);
  EXPECT_TRUE(Check(r).ok());
  r.mutable_observed_at()->set_nanos(1000000000);
  ExpectRefused(r, "observed_at: out of range");
  r.mutable_observed_at()->set_nanos(0);
  EXPECT_TRUE(Check(r).ok());
  r.mutable_observed_at()->set_nanos(-1);
  ExpectRefused(r, "observed_at: out of range");
  r.mutable_observed_at()->set_nanos(0);
  r.mutable_observed_at()->set_seconds(-62135596800LL);
  EXPECT_TRUE(Check(r).ok());
  r.mutable_observed_at()->set_seconds(-62135596801LL);
  ExpectRefused(r, "observed_at: out of range");
  // The last second is in range, hence refused only as being in the future.
  r.mutable_observed_at()->set_seconds(253402300799LL);
  absl::Status st = Check(r);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_TRUE(absl::StartsWith(st.message(), "observed_at: ")) << st;
  EXPECT_NE(st.message().find(" in the future (at most 1h)"), std::string::npos)
      << st;
  r.mutable_observed_at()->set_seconds(253402300800LL);
  ExpectRefused(r, "observed_at: out of range");
}

// The clock skew allowed is one hour: now + 3600 s is accepted, one
// nanosecond more is not.
TEST(ValidateTest, ClockSkewBoundary) {
  v1::HostReport r = Good();
  r.mutable_observed_at()->set_seconds(1800000000 + 3600);
  EXPECT_TRUE(Check(r).ok());
  r.mutable_observed_at()->set_nanos(1);
  ExpectRefused(r, "observed_at: 1h0.000000001s in the future (at most 1h)");
}

// seq: 1 to 2^63 - 1.
TEST(ValidateTest, SeqRange) {
  v1::HostReport r = Good();
  r.set_seq(1);
  EXPECT_TRUE(Check(r).ok());
  r.set_seq(0);
  ExpectRefused(r, "seq: must be > 0");
  r.set_seq((1ULL << 63) - 1);
  EXPECT_TRUE(Check(r).ok());
  r.set_seq(1ULL << 63);
  ExpectRefused(r, "seq: must be < 2^63");
}

// Labels: at most 64 entries, keys of at most 63 bytes, values of at most
// 255 bytes; versions of at most 128 bytes.
TEST(ValidateTest, LabelAndVersionSizeBoundaries) {
  v1::HostReport r = Good();  // one label: "role"
  for (int i = 0; i < 63; ++i)
    (*r.mutable_labels())["k" + std::to_string(i)] = "v";
  EXPECT_TRUE(Check(r).ok());  // 1 + 63 = 64
  (*r.mutable_labels())["k63"] = "v";
  ExpectRefused(r, "labels: 65 (at most 64)");

  r = Good();
  (*r.mutable_labels())[std::string(63, 'k')] = "v";
  EXPECT_TRUE(Check(r).ok());
  r = Good();
  (*r.mutable_labels())[std::string(64, 'k')] = "v";
  ExpectRefused(r, absl::StrCat("labels: invalid key \"", std::string(64, 'k'),
                                "\" (must match [A-Za-z_][A-Za-z0-9_]*, at "
                                "most 63 bytes)"));
  r = Good();
  (*r.mutable_labels())["role"] = std::string(255, 'v');
  EXPECT_TRUE(Check(r).ok());
  (*r.mutable_labels())["role"] = std::string(256, 'v');
  ExpectRefused(r, "labels[role]: value longer than 255 bytes");

  r = Good();
  r.set_agent_version(std::string(128, 'v'));
  r.set_model_version(std::string(128, 'v'));
  EXPECT_TRUE(Check(r).ok());
  r.set_model_version(std::string(129, 'v'));
  ExpectRefused(r, "agent_version/model_version: too long");
}

// A report of exactly max_report_bytes is accepted, one byte more is not.
TEST(ValidateTest, ReportSizeBoundary) {
  v1::HostReport r = Good();
  ValidationLimits limits;
  limits.max_report_bytes = r.ByteSizeLong();
  EXPECT_TRUE(Check(r, limits).ok());
  limits.max_report_bytes = r.ByteSizeLong() - 1;
  absl::Status st = Check(r, limits);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_EQ(st.message(),
            absl::StrCat("report is ", r.ByteSizeLong(), " bytes (at most ",
                         r.ByteSizeLong() - 1, ")"));
}

// Numbers: 0 is a valid non-negative value, the smallest negative double
// is not; only the growth rate may be negative. Repeated fields: 4,096
// entries, not one more.
TEST(ValidateTest, ValueAndCountBoundaries) {
  v1::HostReport r = Good();
  r.mutable_snapshot()->mutable_threads()->set_uptime_seconds(0);
  EXPECT_TRUE(Check(r).ok()) << Check(r);
  r.mutable_snapshot()->mutable_threads()->set_uptime_seconds(-4.9e-324);
  absl::Status st = Check(r);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_TRUE(absl::StartsWith(st.message(), "snapshot.threads.uptime_seconds"))
      << st;
  r = Good();
  r.mutable_predictions()->mutable_stack_depot()->set_growth_pools_per_second(
      -1e300);
  EXPECT_TRUE(Check(r).ok()) << Check(r);

  r = Good();
  for (int i = 0; i < 4096; ++i)
    r.mutable_snapshot()->mutable_fgraph()->add_users();
  EXPECT_TRUE(Check(r).ok()) << Check(r);
  r.mutable_snapshot()->mutable_fgraph()->add_users();
  ExpectRefused(r, "snapshot.fgraph.users: more than 4096 entries");
}

TEST(ValidateTest, AllowsSmallClockSkewAndOldReports) {
  v1::HostReport r = Good();
  r.mutable_observed_at()->set_seconds(1800000000 + 600);
  EXPECT_TRUE(Check(r).ok());
  r.mutable_observed_at()->set_seconds(1000);
  EXPECT_TRUE(Check(r).ok());
}

}  // namespace
}  // namespace tracehealth::server
