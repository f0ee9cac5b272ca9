// Deliberately wrong: the build (.bazelrc: clang, -Werror=thread-safety) must
// refuse this file. tests/style/check_thread_safety.sh builds it and expects
// exactly these two thread-safety errors; it is never part of //....
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tracehealth {

class Counter {
 public:
  // Writes count_ without holding mu_.
  void Bump() { ++count_; }
  // Calls a function that requires mu_ without holding it.
  int Read() { return ReadLocked(); }

 private:
  int ReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return count_; }

  absl::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

int Use() {
  Counter c;
  c.Bump();
  return c.Read();
}

}  // namespace tracehealth
