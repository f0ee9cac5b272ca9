// Helpers for tests that cross process boundaries: start a binary of this
// workspace, wait for the file it writes when ready, stop it.
//
// Thread safety: a Subprocess is owned by one thread.
#ifndef TRACEHEALTH_TESTS_UTIL_SUBPROCESS_H_
#define TRACEHEALTH_TESTS_UTIL_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tracehealth::testing {

class Subprocess {
 public:
  // Starts argv[0] (a path) with argv. stdout and stderr go to `log_path`
  // (appended) when non-empty, else are inherited. `env` entries are added to
  // the inherited environment. Errors: the fork/exec failure.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(
      const std::vector<std::string>& argv, const std::string& log_path = "",
      const std::map<std::string, std::string>& env = {});

  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // Kills (SIGKILL) and reaps the process if it still runs.
  ~Subprocess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }

  // Sends `sig` to the process.
  absl::Status Signal(int sig);

  // Waits up to `timeout` for the process to end. Returns its exit code, or
  // 128 + signal number when killed by a signal. DeadlineExceeded on timeout
  // (the process keeps running).
  absl::StatusOr<int> Wait(absl::Duration timeout);

  // SIGKILL and reap.
  void Kill();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
};

// Absolute path of a file or binary of this workspace in the test's runfiles,
// e.g. Runfile("server/tracehealth-server").
std::string Runfile(absl::string_view workspace_relative_path);

// A fresh directory under TEST_TMPDIR (or /tmp) named after `prefix`.
std::string NewTempDir(absl::string_view prefix);

// NewTempDir, removed with everything in it when this goes out of scope:
// for programs run outside Bazel's test sandbox (benchmarks), whose data
// would otherwise stay in /tmp.
class ScopedTempDir {
 public:
  explicit ScopedTempDir(absl::string_view prefix)
      : path_(NewTempDir(prefix)) {}
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Waits until `path` exists and is non-empty, and returns its content.
// DeadlineExceeded after `timeout`.
absl::StatusOr<std::string> WaitForFile(const std::string& path,
                                        absl::Duration timeout);

// Waits until `path` holds `text`, and returns its content (a process's log
// may show its first lines before the one awaited). DeadlineExceeded after
// `timeout`, naming what the file held then.
absl::StatusOr<std::string> WaitForFileContaining(const std::string& path,
                                                  absl::string_view text,
                                                  absl::Duration timeout);

// Reads a whole file. NotFound when it does not exist.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Writes a whole file (creating parent directories).
absl::Status WriteFile(const std::string& path, absl::string_view content);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_SUBPROCESS_H_
