// Helpers for the gate's cross-process tests: run tracehealthctl and
// capture what it prints, start a real tracehealth-agent on a fixture host
// with its gate socket and wait until the gate answers.
#ifndef TRACEHEALTH_TESTS_GATE_GATE_TEST_UTIL_H_
#define TRACEHEALTH_TESTS_GATE_GATE_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {

struct CtlResult {
  int code = -1;
  std::string out, err;
};

// Runs `argv` (`prefix` first, e.g. setpriv and its flags) with stdout and
// stderr captured in files under `dir`.
inline CtlResult RunCaptured(const std::vector<std::string>& argv,
                             const std::string& dir) {
  static int n = 0;
  const std::string out = absl::StrCat(dir, "/run", ++n, ".out");
  const std::string err = absl::StrCat(dir, "/run", n, ".err");
  std::vector<std::string> sh = {
      "/bin/sh",
      "-c",
      "out=$1; err=$2; shift 2; exec \"$@\" >\"$out\" "
      "2>\"$err\"",
      "sh",
      out,
      err};
  sh.insert(sh.end(), argv.begin(), argv.end());
  CtlResult r;
  auto p = Subprocess::Start(sh);
  if (!p.ok()) return r;
  absl::StatusOr<int> code = (*p)->Wait(absl::Seconds(60));
  r.code = code.ok() ? *code : -1;
  r.out = ReadFile(out).value_or("");
  r.err = ReadFile(err).value_or("");
  return r;
}

inline std::string CtlBinary() {
  return Runfile("tools/tracehealthctl/tracehealthctl");
}

// tracehealthctl gate ARGS...
inline CtlResult Gate(const std::vector<std::string>& args,
                      const std::string& dir,
                      const std::vector<std::string>& prefix = {}) {
  std::vector<std::string> argv = prefix;
  argv.push_back(CtlBinary());
  argv.push_back("gate");
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCaptured(argv, dir);
}

// A tracehealth-agent without a server on host tree `root`, printing a
// report every second and serving its gate on `socket`.
class GateAgent {
 public:
  GateAgent(const std::string& root, const std::string& socket,
            const std::string& dir,
            const std::vector<std::string>& extra_flags = {})
      : socket_(socket), log_(dir + "/agent.log"), dir_(dir) {
    std::vector<std::string> argv = {Runfile("agent/tracehealth-agent"),
                                     "--root=" + root,
                                     "--state_dir=" + dir + "/state",
                                     "--host_id=gate-test",
                                     "--interval=1s",
                                     "--local_socket=" + socket};
    argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
    auto p = Subprocess::Start(argv, log_);
    if (p.ok()) process_ = *std::move(p);
  }

  // Until the gate answers through the socket (its first cycle done).
  bool WaitUntilServing(absl::Duration timeout = absl::Seconds(30)) {
    const absl::Time end = absl::Now() + timeout;
    while (absl::Now() < end && process_ != nullptr && process_->running()) {
      CtlResult r = Gate(
          {"--socket=" + socket_, "--probe=fentry", "--max_latency=1s"}, dir_);
      if (absl::StrContains(r.out, "[agent unix:" + socket_ + "]")) return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return false;
  }

  std::string Log() const { return ReadFile(log_).value_or(""); }
  Subprocess* process() { return process_.get(); }

 private:
  std::string socket_, log_, dir_;
  std::unique_ptr<Subprocess> process_;
};

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_GATE_GATE_TEST_UTIL_H_
