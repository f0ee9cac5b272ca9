#include "server/grpc_server_args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(GrpcServerArgsTest, Defaults) {
  // 2 min = 120,000 ms keepalive, 20 s timeout, 5 min = 300,000 ms idle;
  // no age limit without one.
  EXPECT_THAT(
      GrpcServerArgs({}),
      UnorderedElementsAre(
          Pair("grpc.so_reuseport", 0), Pair("grpc.keepalive_time_ms", 120000),
          Pair("grpc.keepalive_timeout_ms", 20000),
          Pair("grpc.max_connection_idle_ms", 300000),
          Pair("grpc.experimental.tcp_tx_zerocopy_max_simultaneous_sends", 1),
          Pair("grpc.enable_channelz", 0)));
}

TEST(GrpcServerArgsTest, AgeLimitInMilliseconds) {
  GrpcServerArgOptions o;
  o.max_connection_age = absl::Minutes(30);
  o.max_connection_age_grace = absl::Seconds(90);
  auto args = GrpcServerArgs(o);
  EXPECT_EQ(args.at("grpc.max_connection_age_ms"), 1800000);  // 30 × 60,000
  EXPECT_EQ(args.at("grpc.max_connection_age_grace_ms"), 90000);
  EXPECT_EQ(args.size(), 8u);
  // One millisecond is still a limit; zero is none.
  o.max_connection_age = absl::Milliseconds(1);
  EXPECT_EQ(GrpcServerArgs(o).at("grpc.max_connection_age_ms"), 1);
  o.max_connection_age = absl::ZeroDuration();
  EXPECT_EQ(GrpcServerArgs(o).count("grpc.max_connection_age_ms"), 0u);
}

TEST(GrpcServerArgsTest, OverridesReplaceDefaultsOnce) {
  GrpcServerArgOptions o;
  o.max_connection_age = absl::Minutes(30);
  o.overrides = {{"grpc.enable_channelz", 1},
                 {"grpc.max_connection_age_ms", 5000},
                 {"grpc.http2.lookahead_bytes", 4096},
                 {"grpc.enable_channelz", 2}};
  auto args = GrpcServerArgs(o);
  EXPECT_EQ(args.at("grpc.enable_channelz"), 2);  // the later one
  EXPECT_EQ(args.at("grpc.max_connection_age_ms"), 5000);
  EXPECT_EQ(args.at("grpc.http2.lookahead_bytes"), 4096);
  EXPECT_EQ(args.at("grpc.max_connection_idle_ms"), 300000);  // untouched
  EXPECT_EQ(args.size(), 9u);  // 8 with the age, one new name
}

}  // namespace
}  // namespace tracehealth::server
