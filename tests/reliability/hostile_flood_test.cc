// One host flooding the server (hostile_input_fixture.h): the others keep
// being served with low latency, and the flooder is rate limited.
#include <signal.h>

#include <cstdio>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/reliability/hostile_input_fixture.h"

namespace tracehealth::testing {
namespace {

// One host floods the server as fast as it can write. Every other host must
// keep being served with low latency.
TEST_F(HostileInputTest, FloodFromOneHostDoesNotStarveOthers) {
  Start();
  ReportStream flood(ingest_.get());
  v1::HostReport r = Report("flooder", 1);
  const absl::Time start = absl::Now();
  uint64_t sent = 0;
  while (absl::Now() - start < absl::Seconds(8)) {
    r.set_seq(++sent);
    if (!flood.Send(r)) break;
  }
  flood.WaitAcked(sent, absl::Seconds(30));
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  const uint64_t acked = flood.acked();
  grpc::Status st = flood.Finish();
  std::printf(
      "flood: %llu reports sent by one host in 8 s, %llu acked (%.0f/s), %zu "
      "refused, "
      "stream %s\n",
      static_cast<unsigned long long>(sent),
      static_cast<unsigned long long>(acked), acked / secs,
      flood.rejections().size(), st.ok() ? "OK" : st.error_message().c_str());
  ExpectBystanderServed();
}

// A per-host rate limit: a host sending far faster than any agent interval
// (one report every few seconds) is refused with RESOURCE_EXHAUSTED instead
// of filling the database.
TEST_F(HostileInputTest, FloodFromOneHostIsRateLimited) {
  Start();
  ReportStream flood(ingest_.get());
  v1::HostReport r = Report("flooder", 1);
  uint64_t sent = 0;
  for (; sent < 5000;) {
    r.set_seq(++sent);
    if (!flood.Send(r)) break;
  }
  flood.WaitAcked(sent, absl::Seconds(30));
  size_t limited = 0;
  for (const auto& rej : flood.rejections()) {
    if (rej.code() == static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED))
      ++limited;
  }
  grpc::Status st = flood.Finish();
  const bool stream_limited =
      st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  std::printf(
      "flood of %llu: %llu acked, %zu refused RESOURCE_EXHAUSTED, stream: %s\n",
      static_cast<unsigned long long>(sent),
      static_cast<unsigned long long>(flood.acked()), limited,
      st.error_message().c_str());
  EXPECT_TRUE(limited > 0 || stream_limited)
      << "5,000 reports of one host in a burst were all accepted: no per-host "
         "rate limit";
  EXPECT_LT(StoredReports("flooder"), 1000u);
  ExpectBystanderServed();
}

}  // namespace
}  // namespace tracehealth::testing
