// ScanPool: helper threads, started once, that a fleet-wide query's scan
// runs on besides the caller's thread (QueryService owns one). Starting and
// joining a thread per query costs more than the scan gains from it on a
// loaded machine (predict_attach_benchmark).
//
// Run(workers, fn) calls fn(0) on the caller's thread and fn(1) ..
// fn(workers - 1) on the helpers, and returns once every call returned. A
// part no helper has started by the time the caller finished fn(0) (the
// helpers serve another query) is run by the caller itself, so a query
// never waits behind another one.
//
// Thread safety: Run may be called from any number of threads at once.
// The destructor joins the helpers; no Run may be running then.
#ifndef TRACEHEALTH_SERVER_QUERY_SCAN_POOL_H_
#define TRACEHEALTH_SERVER_QUERY_SCAN_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tracehealth::server {

class ScanPool {
 public:
  // `helpers` threads (>= 0).
  explicit ScanPool(int helpers);
  ~ScanPool();
  ScanPool(const ScanPool&) = delete;
  ScanPool& operator=(const ScanPool&) = delete;

  // Calls fn(w) for 0 <= w < workers, fn(0) on this thread.
  void Run(int workers, const std::function<void(int worker)>& fn);

 private:
  struct Part {
    const std::function<void(int)>* fn;
    int worker;
    bool started = false;
    bool done = false;
  };
  void Loop();

  absl::Mutex mu_;
  // Parts not yet started, oldest first (owned by their Run's stack).
  std::deque<Part*> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_SCAN_POOL_H_
