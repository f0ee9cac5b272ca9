// Kills a process group (and removes a directory) when the test process
// ends in any way, a crash or a timeout's SIGKILL included, so that servers
// a test started (PostgreSQL, etcd, Patroni, HAProxy) never outlive it.
//
// A watcher process blocks on a pipe whose only writer is this object; when
// the pipe closes (this object destroyed, or the test process gone) the
// watcher (a shell, exec'd at once after fork) sends SIGKILL to the group
// and removes the directory.
//
// Thread safety: owned by one thread.
#ifndef TRACEHEALTH_TESTS_UTIL_PROCESS_REAPER_H_
#define TRACEHEALTH_TESTS_UTIL_PROCESS_REAPER_H_

#include <sys/types.h>

#include <string>

namespace tracehealth::testing {

class ProcessReaper {
 public:
  // `pgid`: the group to kill (0: none). `dir`: removed afterwards when not
  // empty.
  ProcessReaper(pid_t pgid, std::string dir);
  // Closes the pipe: the watcher kills the group now.
  ~ProcessReaper();
  ProcessReaper(const ProcessReaper&) = delete;
  ProcessReaper& operator=(const ProcessReaper&) = delete;

 private:
  int write_fd_ = -1;
  pid_t watcher_ = -1;
};

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_PROCESS_REAPER_H_
