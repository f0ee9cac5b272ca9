#include "agent/calibrate/idle_threads.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace tracehealth::agent {
namespace {

// Enough for a thread that only waits on a futex.
constexpr size_t kIdleStackBytes = 64 << 10;

}  // namespace

IdleThreads::~IdleThreads() { Stop(); }

void* IdleThreads::Idle(void* self) {
  IdleThreads* t = static_cast<IdleThreads*>(self);
  {
    absl::MutexLock l(&t->mu_);
    ++t->arrived_;
  }
  t->done_.WaitForNotification();
  return nullptr;
}

bool IdleThreads::AllArrived() const { return arrived_ >= threads_.size(); }

uint64_t IdleThreads::waiting() const {
  absl::MutexLock l(&mu_);
  return arrived_;
}

absl::Status IdleThreads::Start(uint64_t k) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kIdleStackBytes);
  threads_.reserve(k);
  int err = 0;
  for (uint64_t i = 0; i < k; ++i) {
    pthread_t t;
    err = pthread_create(&t, &attr, &IdleThreads::Idle, this);
    if (err != 0) break;
    threads_.push_back(t);
  }
  pthread_attr_destroy(&attr);
  if (err == 0) {
    // Every thread has had its first run before the caller times anything.
    absl::MutexLock l(&mu_);
    mu_.Await(absl::Condition(this, &IdleThreads::AllArrived));
    return absl::OkStatus();
  }
  const size_t started = threads_.size();
  Stop();
  return absl::ResourceExhaustedError(absl::StrCat(
      "starting idle thread ", started + 1, " of ", k, ": ", strerror(err)));
}

void IdleThreads::Stop() {
  if (!done_.HasBeenNotified()) done_.Notify();
  for (pthread_t t : threads_) pthread_join(t, nullptr);
  threads_.clear();
}

}  // namespace tracehealth::agent
