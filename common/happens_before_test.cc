// Hands a freshly built object with an absl::Mutex to another thread through
// a relaxed atomic (an ordering TSan does not treat as one, like a hand-off
// inside an uninstrumented library), the receiving thread then locks the
// mutex and reads the object: the shape of a gRPC reactor's first reaction.
// Without sanitizers it is a plain test; under tests/reliability/run_tsan.sh
// a TSan report from it (the annotation not taking effect) fails the run.
#include "common/happens_before.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace tracehealth {
namespace {

struct Reactor {
  absl::Mutex mu;
  std::string state;  // written before the hand-off, then guarded by mu
  int reactions = 0;  // guarded by mu
};

TEST(HappensBeforeTest, ObjectHandedOverThroughRelaxedAtomic) {
  constexpr int kObjects = 200;
  std::atomic<Reactor*> slot{nullptr};
  long length_sum = 0;
  std::vector<std::unique_ptr<Reactor>> received;  // freed after the join
  std::thread receiver([&] {
    for (int i = 0; i < kObjects; ++i) {
      Reactor* r;
      while ((r = slot.load(std::memory_order_relaxed)) == nullptr) {
        std::this_thread::yield();
      }
      slot.store(nullptr, std::memory_order_relaxed);
      HappensAfter(&r->state);
      {
        absl::MutexLock lock(&r->mu);
        length_sum += static_cast<long>(r->state.size());
        ++r->reactions;
      }
      received.emplace_back(r);
    }
  });
  for (int i = 0; i < kObjects; ++i) {
    auto r = std::make_unique<Reactor>();
    r->state.assign(static_cast<size_t>(i % 40) + 1, 'x');
    HappensBefore(&r->state);
    Reactor* raw = r.release();
    // Wait until the receiver took the previous one (relaxed as well).
    while (slot.load(std::memory_order_relaxed) != nullptr) {
      std::this_thread::yield();
    }
    slot.store(raw, std::memory_order_relaxed);
  }
  receiver.join();
  long expected = 0;
  for (int i = 0; i < kObjects; ++i) expected += i % 40 + 1;
  EXPECT_EQ(length_sum, expected);
  ASSERT_EQ(received.size(), static_cast<size_t>(kObjects));
  for (const auto& r : received) {
    absl::MutexLock lock(&r->mu);
    EXPECT_EQ(r->reactions, 1);
  }
}

}  // namespace
}  // namespace tracehealth
