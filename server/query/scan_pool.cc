#include "server/query/scan_pool.h"

#include <algorithm>

namespace tracehealth::server {

ScanPool::ScanPool(int helpers) {
  for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { Loop(); });
}

ScanPool::~ScanPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void ScanPool::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    mu_.Await(absl::Condition(
        +[](ScanPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
          return p->stopping_ || !p->queue_.empty();
        },
        this));
    if (queue_.empty()) return;  // stopping
    Part* part = queue_.front();
    queue_.pop_front();
    part->started = true;
    mu_.Unlock();
    (*part->fn)(part->worker);
    mu_.Lock();
    part->done = true;
  }
}

void ScanPool::Run(int workers, const std::function<void(int)>& fn) {
  std::vector<Part> parts;
  parts.reserve(std::max(0, workers - 1));
  for (int w = 1; w < workers; ++w) parts.push_back(Part{&fn, w});
  if (!parts.empty()) {
    absl::MutexLock lock(&mu_);
    for (Part& p : parts) queue_.push_back(&p);
  }
  fn(0);
  if (parts.empty()) return;
  absl::MutexLock lock(&mu_);
  // The parts still queued run here rather than wait for a helper.
  for (Part& p : parts) {
    if (p.started) continue;
    queue_.erase(std::find(queue_.begin(), queue_.end(), &p));
    p.started = true;
    mu_.Unlock();
    fn(p.worker);
    mu_.Lock();
    p.done = true;
  }
  mu_.Await(absl::Condition(
      +[](std::vector<Part>* ps) {
        return std::all_of(ps->begin(), ps->end(),
                           [](const Part& p) { return p.done; });
      },
      &parts));
}

}  // namespace tracehealth::server
