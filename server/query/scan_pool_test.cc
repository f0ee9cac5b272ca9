#include "server/query/scan_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

TEST(ScanPoolTest, EveryPartRunsOnceAndRunWaitsForAll) {
  ScanPool pool(1);
  for (int round = 0; round < 100; ++round) {
    std::vector<std::atomic<int>> calls(3);
    pool.Run(3, [&](int w) { calls[w]++; });
    // Run returned: every part ran, exactly once.
    for (int w = 0; w < 3; ++w) EXPECT_EQ(calls[w].load(), 1) << w;
  }
}

TEST(ScanPoolTest, PartZeroRunsOnTheCaller) {
  ScanPool pool(1);
  std::thread::id zero;
  pool.Run(2, [&](int w) {
    if (w == 0) zero = std::this_thread::get_id();
  });
  EXPECT_EQ(zero, std::this_thread::get_id());
}

TEST(ScanPoolTest, ConcurrentRunsAllComplete) {
  ScanPool pool(1);
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) pool.Run(2, [&](int) { total++; });
    });
  }
  for (std::thread& t : callers) t.join();
  // 4 callers x 50 runs x 2 parts.
  EXPECT_EQ(total.load(), 400);
}

TEST(ScanPoolTest, NoHelpersRunsEverythingOnTheCaller) {
  ScanPool pool(0);
  int calls = 0;  // no other thread touches it
  pool.Run(3, [&](int) { calls++; });
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace tracehealth::server
