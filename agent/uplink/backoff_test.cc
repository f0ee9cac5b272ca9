#include "agent/uplink/backoff.h"

#include <random>

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(BackoffTest, GrowsExponentiallyToTheCap) {
  BackoffOptions o;
  o.initial = absl::Milliseconds(100);
  o.max = absl::Seconds(2);
  o.jitter = 0;
  Backoff b(o, [] { return 0.5; });
  std::vector<absl::Duration> got;
  for (int i = 0; i < 8; ++i) got.push_back(b.Next());
  EXPECT_EQ(got[0], absl::Milliseconds(100));
  EXPECT_EQ(got[1], absl::Milliseconds(200));
  EXPECT_EQ(got[2], absl::Milliseconds(400));
  EXPECT_EQ(got[4], absl::Milliseconds(1600));
  EXPECT_EQ(got[5], absl::Seconds(2));
  EXPECT_EQ(got[7], absl::Seconds(2));
  b.Reset();
  EXPECT_EQ(b.Next(), absl::Milliseconds(100));
}

TEST(BackoffTest, JitterStaysInBoundsAndVaries) {
  BackoffOptions o;
  o.initial = absl::Seconds(1);
  o.max = absl::Seconds(1000);
  o.jitter = 0.2;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  absl::Duration lo = absl::InfiniteDuration(), hi = absl::ZeroDuration();
  for (int i = 0; i < 200; ++i) {
    Backoff b(o, [&] { return u(rng); });
    absl::Duration d = b.Next();
    EXPECT_GE(d, absl::Milliseconds(800));
    EXPECT_LE(d, absl::Milliseconds(1200));
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_GT(hi - lo, absl::Milliseconds(200));  // not in lockstep
  // The extremes of the random source map to the bounds.
  EXPECT_EQ(Backoff(o, [] { return 0.0; }).Next(), absl::Milliseconds(800));
}

TEST(BackoffTest, JitterNeverExceedsCap) {
  BackoffOptions o;
  o.initial = absl::Seconds(10);
  o.max = absl::Seconds(10);
  o.jitter = 0.5;
  Backoff b(o, [] { return 0.999; });
  EXPECT_LE(b.Next(), absl::Seconds(10));
}

}  // namespace
}  // namespace tracehealth::agent
