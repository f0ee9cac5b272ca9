// K idle threads of the calibrating process: newly created, so the kernel
// has given them no shadow stack yet, and at the tail of the task list.
// Each blocks on one shared notification until Stop(); they use no CPU.
// Start returns once every thread has run up to that wait: a thread still
// to be scheduled for its first run would be run inside the timed enable
// (the walk yields to it at each pass's allocations on preemptible
// kernels), which in tests/lab made a 4,096-thread enable under qemu take
// 392 ms instead of 100 ms.
// Threads die with the process, so a killed calibration leaves none.
//
// Thread safety: Start/Stop from one thread.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_IDLE_THREADS_H_
#define TRACEHEALTH_AGENT_CALIBRATE_IDLE_THREADS_H_

#include <pthread.h>

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace tracehealth::agent {

class IdleThreads {
 public:
  IdleThreads() = default;
  // Stops and joins whatever runs.
  ~IdleThreads();
  IdleThreads(const IdleThreads&) = delete;
  IdleThreads& operator=(const IdleThreads&) = delete;

  // Starts `k` threads with small stacks (64 KiB). On a failure (EAGAIN at
  // the host's thread limit) the ones started are stopped and the error
  // says how many had started. Call once.
  absl::Status Start(uint64_t k);
  // Wakes and joins them.
  void Stop();
  uint64_t running() const { return threads_.size(); }
  // Threads that have reached their wait (all of running() after Start).
  uint64_t waiting() const;

 private:
  static void* Idle(void* self);
  bool AllArrived() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  uint64_t arrived_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Notification done_;
  std::vector<pthread_t> threads_;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_IDLE_THREADS_H_
