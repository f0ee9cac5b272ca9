#include "common/proto_time.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(ProtoTimeTest, TimestampRoundTrip) {
  const absl::Time t =
      absl::FromUnixSeconds(1764000000) + absl::Nanoseconds(123456789);
  const google::protobuf::Timestamp ts = ToProto(t);
  EXPECT_EQ(ts.seconds(), 1764000000);
  EXPECT_EQ(ts.nanos(), 123456789);
  EXPECT_EQ(FromProto(ts), t);
}

TEST(ProtoTimeTest, BeforeTheEpochNanosStayPositive) {
  // -1.25 s = -2 s + 0.75 s.
  const google::protobuf::Timestamp ts =
      ToProto(absl::UnixEpoch() - absl::Milliseconds(1250));
  EXPECT_EQ(ts.seconds(), -2);
  EXPECT_EQ(ts.nanos(), 750000000);
  EXPECT_EQ(FromProto(ts), absl::UnixEpoch() - absl::Milliseconds(1250));
}

TEST(ProtoTimeTest, Epoch) {
  const google::protobuf::Timestamp ts = ToProto(absl::UnixEpoch());
  EXPECT_EQ(ts.seconds(), 0);
  EXPECT_EQ(ts.nanos(), 0);
  EXPECT_EQ(FromProto(google::protobuf::Timestamp()), absl::UnixEpoch());
}

TEST(ProtoTimeTest, Duration) {
  // 90.5 s.
  google::protobuf::Duration d =
      ToProto(absl::Seconds(90) + absl::Milliseconds(500));
  EXPECT_EQ(d.seconds(), 90);
  EXPECT_EQ(d.nanos(), 500000000);
  // -1.5 s: both parts negative.
  d = ToProto(-absl::Milliseconds(1500));
  EXPECT_EQ(d.seconds(), -1);
  EXPECT_EQ(d.nanos(), -500000000);
}

}  // namespace
}  // namespace tracehealth
