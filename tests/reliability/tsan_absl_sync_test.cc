// Hands data between threads through every absl synchronization entry point
// that //third_party:tsan_absl_sync annotates: Mutex (writer and reader
// locks, Await, AwaitWithTimeout, LockWhen, a Condition evaluated by the
// unlocking thread), CondVar and Notification. Without sanitizers it is a
// plain test; under tests/reliability/run_tsan.sh any TSan report from it
// (it would mean an annotation is missing) fails the run.
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace tracehealth::testing {
namespace {

TEST(TsanAbslSyncTest, QueueThroughAwaitAndConditionEvaluatedByUnlocker) {
  absl::Mutex mu;
  std::vector<int> items;  // guarded by mu
  bool done = false;       // guarded by mu
  long sum = 0;
  std::thread consumer([&] {
    for (;;) {
      absl::MutexLock lock(&mu);
      auto ready = [&] { return !items.empty() || done; };
      mu.Await(absl::Condition(&ready));
      if (items.empty()) return;
      sum += items.back();
      items.pop_back();
    }
  });
  std::vector<std::thread> producers;
  for (int t = 0; t < 3; ++t) {
    producers.emplace_back([&] {
      for (int i = 1; i <= 500; ++i) {
        {
          absl::ReaderMutexLock reader(&mu);
          (void)items.size();
        }
        absl::MutexLock lock(&mu);
        items.push_back(i);
        if (i % 50 == 0) {
          mu.AwaitWithTimeout(
              absl::Condition(
                  +[](std::vector<int>* v) { return v->size() < 20; }, &items),
              absl::Milliseconds(5));
        }
      }
    });
  }
  for (std::thread& p : producers) p.join();
  {
    absl::MutexLock lock(&mu);
    done = true;
  }
  consumer.join();
  EXPECT_EQ(sum, 3L * 500 * 501 / 2);
}

TEST(TsanAbslSyncTest, LockWhen) {
  absl::Mutex mu;
  int stage = 0;  // guarded by mu
  int payload = 0;
  std::thread t([&] {
    payload = 7;
    absl::MutexLock lock(&mu);
    stage = 1;
  });
  mu.LockWhen(absl::Condition(
      +[](int* s) { return *s == 1; }, &stage));
  EXPECT_EQ(payload, 7);
  mu.Unlock();
  t.join();
}

TEST(TsanAbslSyncTest, CondVar) {
  absl::Mutex mu;
  absl::CondVar cv;
  bool ready = false;  // guarded by mu
  int data = 0;
  std::thread t([&] {
    absl::MutexLock lock(&mu);
    data = 1;
    ready = true;
    cv.Signal();
  });
  {
    absl::MutexLock lock(&mu);
    while (!ready) cv.Wait(&mu);
    data++;
  }
  t.join();
  EXPECT_EQ(data, 2);
}

TEST(TsanAbslSyncTest, Notification) {
  int payload = 0;
  absl::Notification first;
  absl::Notification second;
  std::thread t([&] {
    payload = 1;
    first.Notify();
    first.WaitForNotification();  // no-op, already notified
  });
  first.WaitForNotification();
  EXPECT_EQ(payload, 1);
  t.join();
  std::thread u([&] {
    payload = 2;
    second.Notify();
  });
  while (!second.HasBeenNotified()) {
  }
  EXPECT_EQ(payload, 2);
  u.join();
  absl::Notification never;
  EXPECT_FALSE(never.WaitForNotificationWithTimeout(absl::Milliseconds(1)));
}

}  // namespace
}  // namespace tracehealth::testing
