#include "tests/util/process_reaper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace tracehealth::testing {

ProcessReaper::ProcessReaper(pid_t pgid, std::string dir) {
  // Built before fork: the child only calls async-signal-safe functions
  // until it execs the shell.
  std::string script = "trap '' INT TERM HUP; cat >/dev/null";
  if (pgid > 0)
    absl::StrAppend(&script, "; kill -9 -- -", pgid, " 2>/dev/null");
  if (!dir.empty()) {
    // Let the killed processes release their files first.
    absl::StrAppend(&script, "; sleep 0.3; rm -rf -- '", dir, "'");
  }
  int fds[2];
  // Close-on-exec: servers started later must not hold the pipe open.
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    // Out of the test's group and session, so that a signal to either does
    // not stop the watcher before it has done its job.
    dup2(fds[0], 0);
    setsid();
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[0]);
  write_fd_ = fds[1];
  watcher_ = pid;
}

ProcessReaper::~ProcessReaper() {
  if (write_fd_ >= 0) close(write_fd_);
  if (watcher_ > 0) {
    int status = 0;
    waitpid(watcher_, &status, 0);
  }
}

}  // namespace tracehealth::testing
