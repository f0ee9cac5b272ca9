// Hostile reports against the real server (hostile_input_fixture.h): sizes,
// label sets, host ids, sequence numbers, numbers, timestamps and enum
// values outside the contract, and a message that does not decode. Each is
// refused with the right code while the bystander keeps being served, and
// nothing refused is stored.
#include <signal.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "gtest/gtest.h"
#include "tests/reliability/hostile_input_fixture.h"

namespace tracehealth::testing {
namespace {

TEST_F(HostileInputTest, OversizedMessages) {
  Start({"--max_report_bytes=200000", "--max_message_bytes=1000000"});
  v1::HostReport big = Report("big", 1);
  big.mutable_snapshot()->mutable_kernel()->set_cmdline(
      std::string(300000, 'x'));
  ExpectRejected("big", big, "report above --max_report_bytes");

  // Above the transport limit gRPC ends the stream; nothing of it is stored.
  ReportStream s(ingest_.get());
  v1::HostReport huge = Report("huge", 1);
  huge.mutable_snapshot()->mutable_kernel()->set_cmdline(
      std::string(1500000, 'x'));
  s.Send(huge);
  grpc::Status st = s.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << st.error_message();
  EXPECT_EQ(StoredReports("huge"), 0u);

  // Many large repeated entries (each small, the whole over the limit).
  v1::HostReport wide = Report("wide", 1);
  for (int i = 0; i < 5000; ++i) {
    wide.mutable_snapshot()->add_unknown()->set_input(
        absl::StrCat("input-", i));
  }
  ExpectRejected("wide", wide, "repeated field above the limit");
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, HugeLabelSets) {
  Start();
  v1::HostReport many = Report("labels", 1);
  for (int i = 0; i < 10000; ++i)
    (*many.mutable_labels())[absl::StrCat("k", i)] = "v";
  ExpectRejected("labels", many, "10,000 labels");
  v1::HostReport sixty_five = Report("labels", 1);
  for (int i = 0; i < 65; ++i)
    (*sixty_five.mutable_labels())[absl::StrCat("k", i)] = "v";
  ExpectRejected("labels", sixty_five, "65 labels");
  v1::HostReport long_key = Report("labels", 1);
  (*long_key.mutable_labels())[std::string(64, 'k')] = "v";
  ExpectRejected("labels", long_key, "64-byte label key");
  v1::HostReport long_value = Report("labels", 1);
  (*long_value.mutable_labels())["role"] = std::string(100000, 'v');
  ExpectRejected("labels", long_value, "100 kB label value");
  v1::HostReport empty_key = Report("labels", 1);
  (*empty_key.mutable_labels())[""] = "v";
  ExpectRejected("labels", empty_key, "empty label key");
  // At the limits it is accepted.
  v1::HostReport ok = Report("labels", 1000);
  ok.mutable_labels()->clear();
  for (int i = 0; i < 64; ++i)
    (*ok.mutable_labels())[absl::StrCat("k", i)] = std::string(255, 'v');
  ReportStream s(ingest_.get());
  ASSERT_TRUE(s.Send(ok));
  EXPECT_TRUE(s.WaitAcked(1000));
  EXPECT_TRUE(s.rejections().empty());
  EXPECT_TRUE(s.Finish().ok());
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, PathLikeAndInvalidHostIds) {
  Start();
  const std::vector<std::string> bad_ids = {"../x",
                                            "a/b",
                                            "/etc/passwd",
                                            "../..",
                                            "",
                                            "a b",
                                            "host\n2",
                                            "x\\y",
                                            "h;rm -rf",
                                            "h\x01",
                                            "ü-host",
                                            std::string(254, 'h'),
                                            std::string("nul\0byte", 8)};
  for (const std::string& id : bad_ids) {
    ExpectRejected("", Report(id, 1),
                   absl::StrCat("host id \"", absl::CEscape(id), "\""));
  }
  // A stream that starts with a bad id may not continue as a good host
  // either way: the rejection does not bind the stream to anything.
  for (const std::string& id : bad_ids) {
    if (id.empty()) continue;
    EXPECT_EQ(StoredReports(id), 0u) << absl::CEscape(id);
  }
  // Nothing was created next to the database by a path-like id.
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(data_dir_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(absl::StartsWith(name, "tracehealth.db") ||
                name == "tracehealth.lock" || name == "ports" ||
                absl::EndsWith(name, ".log"))
        << entry.path();
  }
  EXPECT_FALSE(std::filesystem::exists(
      std::filesystem::path(data_dir_).parent_path() / "x"));

  // Invalid UTF-8 in a string field: proto3 strings must be UTF-8, so the
  // message does not decode: the stream ends with INVALID_ARGUMENT and
  // nothing of it is stored.
  {
    ReportStream s(ingest_.get());
    s.Send(Report(std::string("bad\xff\xfe"), 1));
    grpc::Status st = s.Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << st.error_message();
    EXPECT_EQ(s.acked(), 0u);
    std::printf("invalid UTF-8 host id: stream ended with %d (%s)\n",
                static_cast<int>(st.error_code()), st.error_message().c_str());
  }
  {
    ReportStream s(ingest_.get());
    v1::HostReport r = Report("utf8-label", 1);
    (*r.mutable_labels())["role"] = std::string("\xc3\x28");
    s.Send(r);
    EXPECT_EQ(s.Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(StoredReports("utf8-label"), 0u);
  }
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, SeqZeroHugeAndBackwards) {
  Start();
  ExpectRejected("seq", Report("seq", 0), "seq 0");
  ExpectRejected("seq", Report("seq", uint64_t{1} << 63), "seq 2^63");
  ExpectRejected("seq", Report("seq", std::numeric_limits<uint64_t>::max()),
                 "seq 2^64-1");

  const absl::Time t0 = absl::Now();
  ReportStream s(ingest_.get());
  v1::HostReport r10 = Report("back", 10, t0);
  ASSERT_TRUE(s.Send(r10));
  ASSERT_TRUE(s.WaitAcked(10));
  // A replay of a stored seq with other content is acked and not stored
  // again: the first write wins.
  v1::HostReport replay = Report("back", 10, t0);
  replay.set_interval_seconds(999);
  ASSERT_TRUE(s.Send(replay));
  // A seq below the newest one: never allowed to become the latest state.
  v1::HostReport older = Report("back", 5, t0 - absl::Minutes(5));
  older.set_interval_seconds(555);
  ASSERT_TRUE(s.Send(older));
  ASSERT_TRUE(s.Send(Report("back", 11, t0)));
  ASSERT_TRUE(s.WaitAcked(11));
  EXPECT_TRUE(s.Finish().ok());

  grpc::ClientContext ctx;
  v1::GetHostRequest req;
  req.set_host_id("back");
  v1::HostState st;
  ASSERT_TRUE(query_->GetHost(&ctx, req, &st).ok());
  EXPECT_EQ(st.latest().seq(), 11u);
  EXPECT_NE(st.latest().interval_seconds(), 999);
  EXPECT_NE(st.latest().interval_seconds(), 555);
  EXPECT_LE(st.reports(), 3u);  // 10, 11 and at most the late 5
  std::printf("seq backwards: host holds %llu reports (5 %s)\n",
              static_cast<unsigned long long>(st.reports()),
              st.reports() == 3 ? "stored as a late report" : "not stored");
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, NonFiniteAndNegativeNumbers) {
  Start();
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  for (double v : {kNan, kInf, -kInf, -30.0}) {
    v1::HostReport r = Report("numbers", 1);
    r.set_interval_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("interval_seconds ", v));
  }
  for (double v : {kNan, kInf, -1.0}) {
    v1::HostReport r = Report("numbers", 1);
    r.mutable_snapshot()->mutable_threads()->set_uptime_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("uptime_seconds ", v));
  }
  for (double v : {kNan, -kInf}) {
    v1::HostReport r = Report("numbers", 1);
    ASSERT_GT(r.predictions().attach_size(), 0);
    r.mutable_predictions()->mutable_attach(0)->set_latency_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("attach latency ", v));
  }
  for (double v : {kInf, -0.5}) {
    v1::HostReport r = Report("numbers", 1);
    r.mutable_health()->set_cycle_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("cycle_seconds ", v));
  }
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, TimestampsOutOfRange) {
  Start();
  const absl::Time now = absl::Now();
  ExpectRejected("time", Report("time", 1, now + absl::Hours(2)), "2 h ahead");
  ExpectRejected("time",
                 Report("time", 1,
                        absl::FromCivil(absl::CivilSecond(9999, 1, 1),
                                        absl::UTCTimeZone())),
                 "year 9999");
  v1::HostReport beyond = Report("time", 1);
  beyond.mutable_observed_at()->set_seconds(int64_t{1} << 50);
  ExpectRejected("time", beyond, "beyond the Timestamp range");
  v1::HostReport negative_nanos = Report("time", 1);
  negative_nanos.mutable_observed_at()->set_nanos(-5);
  ExpectRejected("time", negative_nanos, "negative nanos");
  v1::HostReport missing = Report("time", 1);
  missing.clear_observed_at();
  ExpectRejected("time", missing, "no observed_at");
  ExpectBystanderServed();
}

// Reports outside the contract's bounds: repeated attach predictions for a
// probe kind, enum values no type defines, a cmdline over 4 KiB, an
// interval of 0 or of years. Each is a Rejection naming the field, nothing
// of it is stored, and FleetSummary still counts every host once.
TEST_F(HostileInputTest, ReportsOutsideTheContractsBounds) {
  Start();
  struct Case {
    const char* why;
    std::function<void(v1::HostReport&)> breaks;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"201 attach predictions of one kind",
       [](v1::HostReport& r) {
         v1::AttachPrediction a = r.predictions().attach(0);
         r.mutable_predictions()->clear_attach();
         for (int i = 0; i < 201; ++i)
           *r.mutable_predictions()->add_attach() = a;
       },
       "predictions.attach: 201 entries for probe_kind "},
      {"worst_risk 7",
       [](v1::HostReport& r) {
         r.mutable_predictions()->set_worst_risk(static_cast<v1::Risk>(7));
       },
       "predictions.worst_risk: 7 is not a tracehealth.v1.Risk value"},
      {"attach risk -3",
       [](v1::HostReport& r) {
         r.mutable_predictions()->mutable_attach(0)->set_risk(
             static_cast<v1::Risk>(-3));
       },
       "predictions.attach.risk: -3 is not a tracehealth.v1.Risk value"},
      {"cmdline of 4097 bytes",
       [](v1::HostReport& r) {
         r.mutable_snapshot()->mutable_kernel()->set_cmdline(
             std::string(4097, 'c'));
       },
       "snapshot.kernel.cmdline: 4097 bytes (at most 4096)"},
      {"interval 0", [](v1::HostReport& r) { r.set_interval_seconds(0); },
       "interval_seconds: 0 (must be 0.001 to 86400 s)"},
      {"interval of 30 years",
       [](v1::HostReport& r) { r.set_interval_seconds(946080000); },
       "interval_seconds: 9.4608e+08 (must be 0.001 to 86400 s)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    v1::HostReport bad = Report("bounds", 1);
    c.breaks(bad);
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(bad));
    ASSERT_TRUE(s.WaitRejections(1));
    std::vector<v1::Rejection> rej = s.rejections();
    ASSERT_EQ(rej.size(), 1u);
    EXPECT_EQ(rej[0].code(), kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(rej[0].message(), c.message))
        << rej[0].message();
    EXPECT_TRUE(s.Finish().ok());
    EXPECT_EQ(StoredReports("bounds"), 0u);
  }
  grpc::ClientContext ctx;
  v1::FleetSummaryResponse fs;
  ASSERT_TRUE(query_->FleetSummary(&ctx, {}, &fs).ok());
  uint32_t counted = 0;
  for (const auto& c : fs.by_risk()) counted += c.hosts();
  EXPECT_EQ(counted, fs.hosts());
  ExpectBystanderServed();
}

// Host ids made only of dots are refused: "." and ".." are path components
// wherever a host id ends up in a path or URL (exports, dashboards, alert
// links).
TEST_F(HostileInputTest, DotHostIdsAreRejected) {
  Start();
  for (const std::string id : {".", "..", "..."}) {
    ExpectRejected("", Report(id, 1), absl::StrCat("host id \"", id, "\""));
    EXPECT_EQ(StoredReports(id), 0u) << id;
  }
  ExpectBystanderServed();
}

// A message that does not decode (invalid UTF-8 in a proto3 string) ends
// the stream with INVALID_ARGUMENT, not as if the agent had half-closed
// (which would look like success without an ack, and be resent forever);
// what came before it on the stream stays stored.
TEST_F(HostileInputTest, UndecodableReportEndsStreamWithError) {
  Start();
  ReportStream s(ingest_.get());
  ASSERT_TRUE(s.Send(Report("decode", 1)));
  ASSERT_TRUE(s.WaitAcked(1));
  v1::HostReport bad = Report("decode", 2);
  (*bad.mutable_labels())["role"] = std::string("\xc3\x28");
  s.Send(bad);
  grpc::Status st = s.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << "stream ended with " << static_cast<int>(st.error_code()) << " "
      << st.error_message();
  EXPECT_EQ(StoredReports("decode"), 1u);
  ExpectBystanderServed();
}

}  // namespace
}  // namespace tracehealth::testing
