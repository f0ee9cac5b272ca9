#include "agent/gate/thread_history.h"

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);

TEST(ThreadHistoryTest, SlopeOfTheSamples) {
  ThreadHistory h;
  // 240000, 238500, 237000 at 0, 15, 30 s: exactly -100 threads/s.
  h.Add(kT0, 240000);
  h.Add(kT0 + absl::Seconds(15), 238500);
  h.Add(kT0 + absl::Seconds(30), 237000);
  std::optional<v1::ThreadTrend> t = h.Trend(kT0 + absl::Seconds(30));
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->threads_per_second(), -100);
  EXPECT_EQ(t->window_seconds(), 30);
  EXPECT_EQ(t->samples(), 3u);
  EXPECT_EQ(t->threads(), 237000u);
}

TEST(ThreadHistoryTest, LeastSquaresOverNoisySamples) {
  ThreadHistory h;
  // t = 0, 10, 20, 30; y = 100, 130, 110, 160. mean t 15, mean y 125;
  // sum (t-15)(y-125) = (-15)(-25) + (-5)(5) + 5(-15) + 15(35) = 800;
  // sum (t-15)^2 = 500; slope 1.6/s.
  const int ys[] = {100, 130, 110, 160};
  for (int i = 0; i < 4; ++i) h.Add(kT0 + absl::Seconds(10 * i), ys[i]);
  EXPECT_DOUBLE_EQ(h.Trend(kT0 + absl::Seconds(30))->threads_per_second(), 1.6);
}

TEST(ThreadHistoryTest, TooFewTooCloseOrTooOld) {
  ThreadHistory h;
  h.Add(kT0, 100);
  h.Add(kT0 + absl::Seconds(15), 110);
  EXPECT_FALSE(h.Trend(kT0 + absl::Seconds(15)).has_value());  // 2 samples
  // Within 5 s of the previous sample: dropped.
  h.Add(kT0 + absl::Seconds(19), 999);
  EXPECT_FALSE(h.Trend(kT0 + absl::Seconds(19)).has_value());
  h.Add(kT0 + absl::Seconds(20), 120);
  // 3 samples over 20 s: shorter than the 30 s window needed.
  EXPECT_FALSE(h.Trend(kT0 + absl::Seconds(20)).has_value());
  h.Add(kT0 + absl::Seconds(30), 130);
  std::optional<v1::ThreadTrend> t = h.Trend(kT0 + absl::Seconds(30));
  ASSERT_TRUE(t.has_value());
  // t = 0, 15, 20, 30 (mean 16.25); y = 100, 110, 120, 130 (mean 115);
  // sum dt*dy = 243.75 + 6.25 + 18.75 + 206.25 = 475;
  // sum dt^2 = 264.0625 + 1.5625 + 14.0625 + 189.0625 = 468.75.
  EXPECT_DOUBLE_EQ(t->threads_per_second(), 475 / 468.75);
  EXPECT_EQ(t->samples(), 4u);
  // 16 minutes later every sample is older than 15 minutes.
  EXPECT_FALSE(h.Trend(kT0 + absl::Minutes(16)).has_value());
}

TEST(ThreadHistoryTest, KeepsTheNewestSamples) {
  ThreadHistoryOptions o;
  o.max_samples = 3;
  ThreadHistory h(o);
  // 1000 threads for a minute, then +10/s: the oldest drop out.
  h.Add(kT0, 1000);
  h.Add(kT0 + absl::Seconds(60), 1000);
  h.Add(kT0 + absl::Seconds(90), 1300);
  h.Add(kT0 + absl::Seconds(120), 1600);
  std::optional<v1::ThreadTrend> t = h.Trend(kT0 + absl::Seconds(120));
  ASSERT_TRUE(t.has_value());
  // Samples at 60, 90, 120 s: 1000, 1300, 1600: 10/s.
  EXPECT_DOUBLE_EQ(t->threads_per_second(), 10);
  EXPECT_EQ(t->window_seconds(), 60);
}

}  // namespace
}  // namespace tracehealth::agent
