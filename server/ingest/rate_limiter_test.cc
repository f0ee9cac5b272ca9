#include "server/ingest/rate_limiter.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(HostRateLimiterTest, BurstThenRate) {
  HostRateLimiter limiter(10, 5);
  absl::Time t = absl::FromUnixSeconds(1000);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.Allow("a", t)) << i;
  EXPECT_FALSE(limiter.Allow("a", t));
  // Other hosts have their own bucket.
  EXPECT_TRUE(limiter.Allow("b", t));
  // 10/s: one token per 100 ms.
  EXPECT_FALSE(limiter.Allow("a", t + absl::Milliseconds(50)));
  EXPECT_TRUE(limiter.Allow("a", t + absl::Milliseconds(150)));
  EXPECT_FALSE(limiter.Allow("a", t + absl::Milliseconds(160)));
  // Refill is capped at the burst.
  absl::Time later = t + absl::Hours(1);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.Allow("a", later)) << i;
  EXPECT_FALSE(limiter.Allow("a", later));
  // A clock going backwards refills nothing.
  EXPECT_FALSE(limiter.Allow("a", t));
}

TEST(HostRateLimiterTest, ZeroRateIsUnlimited) {
  HostRateLimiter limiter(0, 1);
  EXPECT_TRUE(limiter.unlimited());
  absl::Time t = absl::FromUnixSeconds(1);
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(limiter.Allow("a", t));
}

}  // namespace
}  // namespace tracehealth::server
