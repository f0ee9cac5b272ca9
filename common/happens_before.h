// Orderings that ThreadSanitizer cannot see, stated where they are relied on.
//
// The system libraries (gRPC above all) are not built with -fsanitize=thread:
// when gRPC runs a reactor's OnReadDone on one thread after StartRead was
// called on another, the hand-off happens through its own atomics and queues,
// invisibly to TSan, which then reports the reactor's state as raced on.
// HappensBefore(tag) in the thread that starts such an operation and
// HappensAfter(tag) in the thread that runs its reaction tell TSan what the
// library guarantees: everything before the first call happens before
// everything after the second.
//
// Contract: use a tag (any address) per kind of hand-off, so that unrelated
// operations are not ordered by accident (e.g. one tag for reads, another for
// writes: gRPC may run a read reaction and a write reaction concurrently).
// Without --config=tsan both functions compile to nothing.
#ifndef TRACEHEALTH_COMMON_HAPPENS_BEFORE_H_
#define TRACEHEALTH_COMMON_HAPPENS_BEFORE_H_

#ifdef TRACEHEALTH_TSAN_ANNOTATIONS
#include <sanitizer/tsan_interface.h>
#endif

namespace tracehealth {

// HappensBefore(tag): everything the calling thread did so far happens
// before what any thread does after a later HappensAfter(tag).
// HappensAfter(tag): the calling thread's next steps happen after everything
// that preceded each earlier HappensBefore(tag).
#ifdef TRACEHEALTH_TSAN_ANNOTATIONS
inline void HappensBefore(const void* tag) {
  __tsan_release(const_cast<void*>(tag));
}
inline void HappensAfter(const void* tag) {
  __tsan_acquire(const_cast<void*>(tag));
}
#else
inline void HappensBefore(const void*) {}
inline void HappensAfter(const void*) {}
#endif

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_HAPPENS_BEFORE_H_
