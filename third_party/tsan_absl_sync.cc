// ThreadSanitizer annotations for Debian's prebuilt absl::Mutex, CondVar and
// Notification. Linked only under `--config=tsan` (see //third_party:absl).
//
// Why this exists: libabsl_synchronization.so is not compiled with
// -fsanitize=thread, so TSan cannot see that Mutex::Unlock in one thread
// happens before Mutex::Lock in another, and reports every access guarded by
// an absl::Mutex as a race. This file defines the same (mangled) symbols as
// the library; the executable's definitions take precedence over the
// library's for every caller (the project's code, and gRPC, which uses
// absl::Mutex too). Each wrapper forwards to the real function, found with
// dlsym(RTLD_NEXT), and tells TSan what happened with its public mutex
// annotation API (<sanitizer/tsan_interface.h>).
//
// Rules the wrappers follow:
//  - Annotations never span the real call (a __tsan_mutex_pre_* ...
//    __tsan_mutex_post_* pair makes TSan ignore the thread's memory accesses
//    in between). A lock is announced after the real lock returned, an unlock
//    before the real unlock starts, so TSan never sees two owners at once.
//  - Await, LockWhen and CondVar::Wait release and re-acquire the mutex
//    inside the library: the wrapper announces an unlock before and a lock
//    after the real call (Await keeps the reader/writer mode the caller held).
//  - absl evaluates a waiter's Condition in whichever thread holds the mutex
//    at that moment, often the one inside Unlock, after this wrapper has
//    announced the unlock, and possibly while readers hold it. So the
//    Condition is replaced by one that announces a shared lock of the mutex
//    around the original predicate: the predicate's reads are then ordered
//    after the writes of every writer. (The try-lock flag keeps this short
//    lock out of TSan's lock-order graph.) The waiter built that replacement
//    on its stack before queueing itself inside absl: a release before the
//    real call and an acquire in the evaluator order the two.
//  - Notification: Notify releases (on the object and on its `notified_yet_`
//    flag, which the inline HasBeenNotified() loads with acquire order), a
//    wait that saw the notification acquires.
//  - Calls the library makes to itself through its PLT (Notification uses its
//    own Mutex, AwaitWithTimeout calls AwaitWithDeadline, ...) also land here;
//    a per-thread depth counter forwards those untouched, so every operation
//    is announced exactly once, by its outermost wrapper.

#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

thread_local int depth = 0;

// Marks the current thread as inside a wrapped call. `outer()` is true for
// the outermost one, the only one that annotates.
class Scope {
 public:
  Scope() : outer_(depth++ == 0) {}
  ~Scope() { --depth; }
  bool outer() const { return outer_; }

 private:
  bool outer_;
};

void* Next(const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found: %s\n", name,
                 dlerror());
    std::abort();
  }
  return fn;
}

// The real function `sym` of type `type`, looked up once.
#define REAL(type, sym) \
  static const auto real = reinterpret_cast<type>(Next(sym))

void AnnounceLock(void* mu, unsigned flags) {
  __tsan_mutex_pre_lock(mu, flags);
  __tsan_mutex_post_lock(mu, flags, 0);
}

void AnnounceUnlock(void* mu, unsigned flags) {
  __tsan_mutex_pre_unlock(mu, flags & __tsan_mutex_read_lock);
  __tsan_mutex_post_unlock(mu, flags & __tsan_mutex_read_lock);
}

// The mode the calling thread holds `mu` in (it must hold it): kMuWriter
// (0x08 in absl/synchronization/mutex.cc) is set in the state word, the
// Mutex's only member, while a writer holds it.
unsigned HeldMode(void* mu) {
  static_assert(sizeof(absl::Mutex) == sizeof(intptr_t), "Mutex layout");
  const intptr_t word =
      __atomic_load_n(static_cast<intptr_t*>(mu), __ATOMIC_RELAXED);
  return (word & 0x08) != 0 ? 0 : __tsan_mutex_read_lock;
}

// A Condition that evaluates `original` as a short lock of `mu` (see above).
struct Guarded {
  const absl::Condition* original;
  void* mu;
};

bool EvalGuarded(void* arg) {
  const auto* g = static_cast<const Guarded*>(arg);
  // Another thread's Unlock may evaluate a waiter's condition: the waiter
  // built `g` and its Condition before queueing itself inside absl, which
  // TSan cannot see (paired with the release in LOCKWHEN_WRAPPER).
  __tsan_acquire(const_cast<Guarded*>(g));
  // A shared lock: absl may evaluate conditions while readers hold the mutex
  // (a predicate only reads), and a shared lock still orders the predicate
  // after every writer's unlock.
  AnnounceLock(g->mu, __tsan_mutex_try_read_lock);
  const bool result = g->original->Eval();
  AnnounceUnlock(g->mu, __tsan_mutex_read_lock);
  return result;
}

// Notification's layout, to find `notified_yet_` (private).
struct NotificationLayout {
  absl::Mutex mutex;
  std::atomic<bool> notified_yet;
};
static_assert(sizeof(NotificationLayout) == sizeof(absl::Notification),
              "Notification layout");

void ReleaseNotification(const void* n) {
  auto* base = const_cast<char*>(static_cast<const char*>(n));
  __tsan_release(base);
  __tsan_release(base + offsetof(NotificationLayout, notified_yet));
}

void AcquireNotification(const void* n) {
  __tsan_acquire(const_cast<void*>(n));
}

using absl::Condition;
using absl::Duration;
using absl::Time;

}  // namespace

// Each wrapper has the real symbol's name; `self` is the member's `this`.
#define WRAP(ret, cname, sym, ...) \
  extern "C" ret cname(__VA_ARGS__) __asm__(sym); \
  extern "C" ret cname(__VA_ARGS__)

// ---- Mutex: plain lock and unlock ----

#define LOCK_WRAPPER(cname, sym, flags)           \
  WRAP(void, cname, sym, void* self) {            \
    REAL(void (*)(void*), sym);                   \
    Scope scope;                                  \
    real(self);                                   \
    if (scope.outer()) AnnounceLock(self, flags); \
  }

#define UNLOCK_WRAPPER(cname, sym, flags)           \
  WRAP(void, cname, sym, void* self) {              \
    REAL(void (*)(void*), sym);                     \
    Scope scope;                                    \
    if (scope.outer()) AnnounceUnlock(self, flags); \
    real(self);                                     \
  }

#define TRYLOCK_WRAPPER(cname, sym, flags)                  \
  WRAP(bool, cname, sym, void* self) {                      \
    REAL(bool (*)(void*), sym);                             \
    Scope scope;                                            \
    const bool locked = real(self);                         \
    if (scope.outer() && locked) AnnounceLock(self, flags); \
    return locked;                                          \
  }

LOCK_WRAPPER(TsanMutexLock, "_ZN4absl7debian35Mutex4LockEv", 0)
LOCK_WRAPPER(TsanMutexReaderLock, "_ZN4absl7debian35Mutex10ReaderLockEv",
             __tsan_mutex_read_lock)
UNLOCK_WRAPPER(TsanMutexUnlock, "_ZN4absl7debian35Mutex6UnlockEv", 0)
UNLOCK_WRAPPER(TsanMutexReaderUnlock,
               "_ZN4absl7debian35Mutex12ReaderUnlockEv",
               __tsan_mutex_read_lock)
TRYLOCK_WRAPPER(TsanMutexTryLock, "_ZN4absl7debian35Mutex7TryLockEv",
                __tsan_mutex_try_lock)
TRYLOCK_WRAPPER(TsanMutexReaderTryLock,
                "_ZN4absl7debian35Mutex13ReaderTryLockEv",
                __tsan_mutex_try_read_lock)

// ---- Mutex: lock when a condition holds ----

// `args` are the parameters after the Condition, `pass` their names.
#define LOCKWHEN_WRAPPER(ret, cname, sym, flags, params, pass)                \
  WRAP(ret, cname, sym, void* self, const Condition& cond params) {           \
    REAL(ret (*)(void*, const Condition& params), sym);                       \
    Scope scope;                                                              \
    if (!scope.outer()) return real(self, cond pass);                         \
    Guarded guarded{&cond, self};                                             \
    const Condition wrapped(&EvalGuarded, &guarded);                          \
    struct Announce {                                                         \
      void* mu;                                                               \
      ~Announce() { AnnounceLock(mu, flags); }                                \
    } announce{self};                                                         \
    __tsan_release(&guarded);                                                 \
    return real(self, wrapped pass);                                          \
  }

#define COMMA ,
LOCKWHEN_WRAPPER(void, TsanMutexLockWhen,
                 "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE", 0, , )
LOCKWHEN_WRAPPER(void, TsanMutexReaderLockWhen,
                 "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE",
                 __tsan_mutex_read_lock, , )
LOCKWHEN_WRAPPER(
    bool, TsanMutexLockWhenWithTimeout,
    "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE",
    0, COMMA Duration timeout, COMMA timeout)
LOCKWHEN_WRAPPER(
    bool, TsanMutexLockWhenWithDeadline,
    "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE",
    0, COMMA Time deadline, COMMA deadline)
LOCKWHEN_WRAPPER(
    bool, TsanMutexReaderLockWhenWithTimeout,
    "_ZN4absl7debian35Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_"
    "8DurationE",
    __tsan_mutex_read_lock, COMMA Duration timeout, COMMA timeout)
LOCKWHEN_WRAPPER(
    bool, TsanMutexReaderLockWhenWithDeadline,
    "_ZN4absl7debian35Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_"
    "4TimeE",
    __tsan_mutex_read_lock, COMMA Time deadline, COMMA deadline)

// ---- Mutex: wait for a condition while holding the lock ----

#define AWAIT_WRAPPER(ret, cname, sym, params, pass)                \
  WRAP(ret, cname, sym, void* self, const Condition& cond params) { \
    REAL(ret (*)(void*, const Condition& params), sym);             \
    Scope scope;                                                    \
    if (!scope.outer()) return real(self, cond pass);               \
    const unsigned mode = HeldMode(self);                           \
    Guarded guarded{&cond, self};                                   \
    const Condition wrapped(&EvalGuarded, &guarded);                \
    AnnounceUnlock(self, mode);                                     \
    struct Announce {                                               \
      void* mu;                                                     \
      unsigned mode;                                                \
      ~Announce() { AnnounceLock(mu, mode); }                       \
    } announce{self, mode};                                         \
    return real(self, wrapped pass);                                \
  }

AWAIT_WRAPPER(void, TsanMutexAwait,
              "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE", , )
AWAIT_WRAPPER(
    bool, TsanMutexAwaitWithTimeout,
    "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE",
    COMMA Duration timeout, COMMA timeout)
AWAIT_WRAPPER(
    bool, TsanMutexAwaitWithDeadline,
    "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE",
    COMMA Time deadline, COMMA deadline)

// ---- Mutex: destruction (a later object at the same address is new) ----

#define DESTRUCTOR_WRAPPER(cname, sym)                             \
  WRAP(void, cname, sym, void* self) {                             \
    REAL(void (*)(void*), sym);                                    \
    Scope scope;                                                   \
    if (scope.outer()) __tsan_mutex_destroy(self, 0);              \
    real(self);                                                    \
  }

DESTRUCTOR_WRAPPER(TsanMutexDestroy1, "_ZN4absl7debian35MutexD1Ev")
DESTRUCTOR_WRAPPER(TsanMutexDestroy2, "_ZN4absl7debian35MutexD2Ev")

// ---- CondVar: Wait releases `mu` and holds it again on return ----

#define CONDVAR_WAIT_WRAPPER(ret, cname, sym, params, pass)    \
  WRAP(ret, cname, sym, void* self, void* mu params) {         \
    REAL(ret (*)(void*, void* params), sym);                   \
    Scope scope;                                               \
    if (!scope.outer()) return real(self, mu pass);            \
    const unsigned mode = HeldMode(mu);                        \
    AnnounceUnlock(mu, mode);                                  \
    struct Announce {                                          \
      void* cv;                                                \
      void* mu;                                                \
      unsigned mode;                                           \
      ~Announce() {                                            \
        AnnounceLock(mu, mode);                                \
        __tsan_acquire(cv);                                    \
      }                                                        \
    } announce{self, mu, mode};                                \
    return real(self, mu pass);                                \
  }

CONDVAR_WAIT_WRAPPER(void, TsanCondVarWait,
                     "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE", , )
CONDVAR_WAIT_WRAPPER(
    bool, TsanCondVarWaitWithTimeout,
    "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE",
    COMMA Duration timeout, COMMA timeout)
CONDVAR_WAIT_WRAPPER(
    bool, TsanCondVarWaitWithDeadline,
    "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE",
    COMMA Time deadline, COMMA deadline)

#define CONDVAR_SIGNAL_WRAPPER(cname, sym)        \
  WRAP(void, cname, sym, void* self) {            \
    REAL(void (*)(void*), sym);                   \
    Scope scope;                                  \
    if (scope.outer()) __tsan_release(self);      \
    real(self);                                   \
  }

CONDVAR_SIGNAL_WRAPPER(TsanCondVarSignal, "_ZN4absl7debian37CondVar6SignalEv")
CONDVAR_SIGNAL_WRAPPER(TsanCondVarSignalAll,
                       "_ZN4absl7debian37CondVar9SignalAllEv")

// ---- Notification ----

WRAP(void, TsanNotificationNotify, "_ZN4absl7debian312Notification6NotifyEv",
     void* self) {
  REAL(void (*)(void*), "_ZN4absl7debian312Notification6NotifyEv");
  Scope scope;
  if (scope.outer()) ReleaseNotification(self);
  real(self);
}

WRAP(void, TsanNotificationWait,
     "_ZNK4absl7debian312Notification19WaitForNotificationEv",
     const void* self) {
  REAL(void (*)(const void*),
       "_ZNK4absl7debian312Notification19WaitForNotificationEv");
  Scope scope;
  real(self);
  if (scope.outer()) AcquireNotification(self);
}

WRAP(bool, TsanNotificationWaitWithTimeout,
     "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_"
     "8DurationE",
     const void* self, Duration timeout) {
  REAL(bool (*)(const void*, Duration),
       "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_"
       "8DurationE");
  Scope scope;
  const bool notified = real(self, timeout);
  if (scope.outer() && notified) AcquireNotification(self);
  return notified;
}

WRAP(bool, TsanNotificationWaitWithDeadline,
     "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_"
     "4TimeE",
     const void* self, Time deadline) {
  REAL(bool (*)(const void*, Time),
       "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_"
       "4TimeE");
  Scope scope;
  const bool notified = real(self, deadline);
  if (scope.outer() && notified) AcquireNotification(self);
  return notified;
}
