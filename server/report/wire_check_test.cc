#include "server/report/wire_check.h"

#include <cmath>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::server {
namespace {

v1::HostReport Sample() {
  return SampleReport(FleetHost(3), 7, absl::FromUnixSeconds(1800000000));
}

absl::Status Check(const std::string& wire) {
  return CheckReportWire(wire, WireLimits{});
}

TEST(WireCheckTest, AcceptsARealReport) {
  const std::string wire = Sample().SerializeAsString();
  EXPECT_TRUE(Check(wire).ok()) << Check(wire);
  // With a feature-table override (every field of it).
  v1::HostReport r = Sample();
  r.mutable_feature_table_override()->set_digest("sha256:00");
  v1::FeatureRow* row = r.mutable_feature_table_override()->add_rows();
  row->set_name("kasan_flush_combined");
  row->set_description("vendor backport");
  row->set_since("6.13");
  row->add_backports("6.12.2");
  EXPECT_TRUE(Check(r.SerializeAsString()).ok())
      << Check(r.SerializeAsString());
  // Its strings are held to UTF-8 like every other.
  row->set_since("6.\xff");
  EXPECT_TRUE(absl::IsDataLoss(Check(r.SerializeAsString())));
}

TEST(WireCheckTest, BytesThatDoNotDecodeAreDataLoss) {
  const std::string wire = Sample().SerializeAsString();
  EXPECT_TRUE(absl::IsDataLoss(Check(wire.substr(0, wire.size() - 1))));
  EXPECT_TRUE(
      absl::IsDataLoss(Check(wire + std::string("\x00", 1))));  // field 0
  EXPECT_TRUE(absl::IsDataLoss(Check(wire + "\x0b")));          // group start
  EXPECT_TRUE(absl::IsDataLoss(Check(wire + "\x0f")));          // wire type 7
  EXPECT_TRUE(
      absl::IsDataLoss(Check("\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")));
  // Tags and lengths take at most 5 bytes, even when the value is small:
  // a 6-byte tag (found by the fuzzer) and a 6-byte length.
  const std::string long_tag(
      "\xa1\xfe\xff\xfc\x82\x00+\x12"
      "c\xff+\x7fnd",
      14);
  const std::string long_len("\x0a\x81\x80\x80\x80\x80\x00x", 8);
  for (const std::string& w : {long_tag, long_len}) {
    v1::HostReport r;
    EXPECT_FALSE(r.ParseFromString(w));
    EXPECT_TRUE(absl::IsDataLoss(Check(w)));
  }

  v1::HostReport deep = Sample();
  deep.mutable_snapshot()->mutable_kernel()->set_release("6.1\xff");
  absl::Status st = Check(deep.SerializeAsString());
  EXPECT_TRUE(absl::IsDataLoss(st)) << st;
  EXPECT_NE(st.message().find("snapshot.kernel.release"), std::string::npos)
      << st;

  v1::HostReport label = Sample();
  (*label.mutable_labels())["role"] = std::string("\xc3\x28");
  EXPECT_TRUE(absl::IsDataLoss(Check(label.SerializeAsString())));
}

TEST(WireCheckTest, BadNumbersAreInvalidArgumentNamingTheField) {
  v1::HostReport r = Sample();
  r.mutable_predictions()->mutable_attach(1)->set_latency_seconds(std::nan(""));
  absl::Status st = Check(r.SerializeAsString());
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_NE(st.message().find("predictions.attach.latency_seconds"),
            std::string::npos)
      << st;

  r = Sample();
  r.mutable_snapshot()->mutable_threads()->set_uptime_seconds(-1);
  st = Check(r.SerializeAsString());
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;

  r = Sample();
  r.mutable_predictions()->mutable_stack_depot()->set_growth_pools_per_second(
      -2);
  EXPECT_TRUE(Check(r.SerializeAsString()).ok());

  WireLimits two;
  two.max_repeated = 2;
  st = CheckReportWire(Sample().SerializeAsString(), two);
  EXPECT_TRUE(absl::IsInvalidArgument(st)) << st;
  EXPECT_NE(st.message().find("more than 2 entries"), std::string::npos) << st;
}

// What the walk accepts, protobuf parses: the property that lets the server
// store a report it has not parsed. Random damage to a real report must
// never get past the walk and then fail to parse.
TEST(WireCheckTest, AcceptedBytesAlwaysParse) {
  const std::string base = Sample().SerializeAsString();
  std::mt19937 rng(20261130);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string wire = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % wire.size();
      switch (rng() % 4) {
        case 0:
          wire[at] = static_cast<char>(rng());
          break;
        case 1:
          wire[at] = static_cast<char>(wire[at] ^ (1 << (rng() % 8)));
          break;
        case 2:
          wire.insert(at, 1, static_cast<char>(rng()));
          break;
        default:
          wire.erase(at, 1);
          break;
      }
    }
    v1::HostReport parsed;
    const bool parses = parsed.ParseFromString(wire);
    const absl::Status st = Check(wire);
    if (absl::IsDataLoss(st)) {
      ++rejected;
    } else {
      ++accepted;
      ASSERT_TRUE(parses) << "accepted but does not parse, edit round " << i
                          << ": " << st;
    }
  }
  // Both sides of the property were exercised.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace tracehealth::server
