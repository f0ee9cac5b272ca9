#include "tests/util/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"

extern char** environ;

namespace tracehealth::testing {

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv, const std::string& log_path,
    const std::map<std::string, std::string>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("empty argv");
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (env.count(key) == 0) env_strings.push_back(entry);
  }
  for (const auto& [k, v] : env) env_strings.push_back(absl::StrCat(k, "=", v));
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int log_fd = -1;
  if (!log_path.empty()) {
    log_fd =
        open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) return ErrnoToStatus(errno, log_path);
  }
  pid_t pid = fork();
  if (pid < 0) return ErrnoToStatus(errno, "fork");
  if (pid == 0) {
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    setpgid(0, 0);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  if (log_fd >= 0) close(log_fd);
  return std::unique_ptr<Subprocess>(new Subprocess(pid));
}

Subprocess::~Subprocess() { Kill(); }

absl::Status Subprocess::Signal(int sig) {
  if (pid_ <= 0) return absl::FailedPreconditionError("process not running");
  if (kill(pid_, sig) != 0) return ErrnoToStatus(errno, "kill");
  return absl::OkStatus();
}

absl::StatusOr<int> Subprocess::Wait(absl::Duration timeout) {
  if (pid_ <= 0) return absl::FailedPreconditionError("process not running");
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (r < 0 && errno != EINTR) return ErrnoToStatus(errno, "waitpid");
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("pid ", pid_, " still running"));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
}

void Subprocess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string Runfile(absl::string_view path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr) {
    return absl::StrCat(srcdir, "/",
                        workspace != nullptr ? workspace : "tracehealth", "/",
                        path);
  }
  return std::string(path);
}

std::string NewTempDir(absl::string_view prefix) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl =
      absl::StrCat(base != nullptr ? base : "/tmp", "/", prefix, "XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* dir = mkdtemp(buf.data());
  return dir != nullptr ? std::string(dir) : tmpl;
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status WriteFile(const std::string& path, absl::string_view content) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(),
                                      ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(absl::StrCat(path, ": cannot write"));
  out.write(content.data(), content.size());
  return out.good() ? absl::OkStatus()
                    : absl::InternalError(absl::StrCat(path, ": write failed"));
}

absl::StatusOr<std::string> WaitForFile(const std::string& path,
                                        absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<std::string> content = ReadFile(path);
    if (content.ok() && !content->empty()) return content;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat("waiting for ", path));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::StatusOr<std::string> WaitForFileContaining(const std::string& path,
                                                  absl::string_view text,
                                                  absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<std::string> content = ReadFile(path);
    if (content.ok() && absl::StrContains(*content, text)) return content;
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          "waiting for \"", text, "\" in ", path, ", which holds: ",
          content.ok() ? *content : content.status().ToString()));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

}  // namespace tracehealth::testing
