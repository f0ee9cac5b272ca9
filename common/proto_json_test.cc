#include "common/proto_json.h"

#include "gtest/gtest.h"
#include "proto/tracehealth/v1/mitigation.pb.h"

namespace tracehealth {
namespace {

v1::ThreadTrend Trend() {
  v1::ThreadTrend t;
  t.set_threads_per_second(1.5);
  t.set_samples(3);
  return t;
}

TEST(ProtoJsonTest, CompactWithProtoFieldNamesWithoutDefaults) {
  EXPECT_EQ(*ProtoToJson(Trend()), R"({"threads_per_second":1.5,"samples":3})");
}

TEST(ProtoJsonTest, DefaultsPrintedWhenAsked) {
  // uint64 is a string in proto3's JSON mapping.
  ProtoJsonOptions options;
  options.print_defaults = true;
  EXPECT_EQ(*ProtoToJson(Trend(), options),
            R"({"threads_per_second":1.5,"window_seconds":0,"samples":3,)"
            R"("threads":"0"})");
}

TEST(ProtoJsonTest, PrettyIsOneFieldALine) {
  ProtoJsonOptions options;
  options.pretty = true;
  EXPECT_EQ(*ProtoToJson(Trend(), options),
            "{\n \"threads_per_second\": 1.5,\n \"samples\": 3\n}\n");
}

}  // namespace
}  // namespace tracehealth
