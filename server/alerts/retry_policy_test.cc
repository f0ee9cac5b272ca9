#include "server/alerts/retry_policy.h"

#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

TEST(RetryPolicyTest, DoublesFromOneSecondToOneMinute) {
  RetryPolicy p({});
  EXPECT_EQ(p.retry_at(), absl::InfinitePast());
  std::vector<int64_t> waits;
  absl::Time now = kT0;
  for (int i = 0; i < 9; ++i) {
    absl::Time at = p.Failed(now, std::nullopt);
    waits.push_back(absl::ToInt64Seconds(at - now));
    now = at;
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 60, 60, 60}));
  p.Succeeded();
  EXPECT_EQ(p.retry_at(), absl::InfinitePast());
  EXPECT_EQ(p.Failed(now, std::nullopt), now + absl::Seconds(1));
}

TEST(RetryPolicyTest, RetryAfterReplacesTheWaitUpToFiveMinutes) {
  RetryPolicy p({});
  EXPECT_EQ(p.Failed(kT0, absl::Seconds(30)), kT0 + absl::Seconds(30));
  // The doubling went on underneath: 2 s next without a Retry-After.
  EXPECT_EQ(p.Failed(kT0, std::nullopt), kT0 + absl::Seconds(2));
  EXPECT_EQ(p.Failed(kT0, absl::Seconds(300)), kT0 + absl::Seconds(300));
  EXPECT_EQ(p.Failed(kT0, absl::Seconds(301)), kT0 + absl::Seconds(300));
  EXPECT_EQ(p.Failed(kT0, absl::ZeroDuration()), kT0);
}

TEST(RetryPolicyTest, ParsesSecondsAndHttpDates) {
  EXPECT_EQ(ParseRetryAfter("120", kT0), absl::Seconds(120));
  EXPECT_EQ(ParseRetryAfter(" 0 ", kT0), absl::ZeroDuration());
  // kT0 is Fri, 15 Jan 2027 08:00:00 GMT.
  EXPECT_EQ(ParseRetryAfter("Fri, 15 Jan 2027 08:00:45 GMT", kT0),
            absl::Seconds(45));
  EXPECT_EQ(ParseRetryAfter("Fri, 15 Jan 2027 07:59:00 GMT", kT0),
            absl::ZeroDuration());
  EXPECT_EQ(ParseRetryAfter("", kT0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-5", kT0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("soon", kT0), std::nullopt);
}

}  // namespace
}  // namespace tracehealth
