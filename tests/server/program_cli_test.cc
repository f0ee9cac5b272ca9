// The command lines of tracehealth-server, tracehealth-agent and
// tracehealth-loadgen, as an operator meets them: --help prints the
// program's own flags and exits 0; a start-up mistake is named for what it
// is (a missing data directory, a TLS key that is not a key); the agent
// warns of flags it will not use.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

struct ProgramRun {
  int code = -1;
  std::string out;  // stdout and stderr
};

ProgramRun Start(const std::string& binary,
                 const std::vector<std::string>& args) {
  std::vector<std::string> argv = {Runfile(binary)};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = NewTempDir("cli") + "/out";
  ProgramRun r;
  auto p = Subprocess::Start(argv, log);
  if (!p.ok()) return r;
  auto rc = (*p)->Wait(absl::Seconds(60));
  if (rc.ok()) r.code = *rc;
  auto out = ReadFile(log);
  if (out.ok()) r.out = *out;
  return r;
}

bool Openssl(const std::string& dir, const std::string& args) {
  return std::system(absl::StrCat("cd '", dir, "' && openssl ", args,
                                  " >/dev/null 2>&1")
                         .c_str()) == 0;
}

TEST(ProgramCliTest, HelpListsEachProgramsOwnFlagsAndExitsZero) {
  const std::pair<const char*, std::vector<const char*>> programs[] = {
      {"server/tracehealth-server",
       {"tracehealth-server --data_dir=DIR", "  --data_dir\n",
        "  --retention=30d\n", "  --listen=127.0.0.1:7443\n",
        "  --alert_rules\n"}},
      {"agent/tracehealth-agent",
       {"tracehealth-agent --once", "  --once=false\n", "  --root=/\n",
        "  --interval=15s\n", "  --server\n"}},
      {"tools/loadgen/tracehealth-loadgen",
       {"tracehealth-loadgen --server=HOST:PORT", "  --hosts=100\n",
        "  --window=64\n"}},
  };
  for (const auto& [binary, wants] : programs) {
    for (const char* flag : {"--help", "-h"}) {
      ProgramRun r = Start(binary, {flag});
      EXPECT_EQ(r.code, 0) << binary << " " << flag << "\n" << r.out;
      for (const char* want : wants) {
        EXPECT_TRUE(absl::StrContains(r.out, want))
            << binary << ": " << want << "\n"
            << r.out;
      }
      // Not the libraries' flags: those are --helpfull's.
      EXPECT_FALSE(absl::StrContains(r.out, "--flagfile")) << binary;
    }
  }
}

TEST(ProgramCliTest, ServerNamesAMissingDataDirectory) {
  const std::string dir = NewTempDir("cli") + "/missing";
  ProgramRun r = Start("server/tracehealth-server",
                       {"--data_dir=" + dir, "--listen=127.0.0.1:0",
                        "--metrics_listen=127.0.0.1:0"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(absl::StrContains(
      r.out, absl::StrCat("tracehealth-server: NOT_FOUND: data directory ", dir,
                          " does not exist\n")))
      << r.out;
}

TEST(ProgramCliTest, ServerNamesABadTlsKeyAsATlsError) {
  const std::string d = NewTempDir("tls");
  ASSERT_TRUE(Openssl(d,
                      "req -x509 -newkey rsa:2048 -nodes -keyout server.key "
                      "-out server.pem -days 1 -subj /CN=localhost"));
  ASSERT_TRUE(Openssl(d, "genrsa -out other.key 2048"));
  ASSERT_TRUE(WriteFile(d + "/garbage.key", "not a key\n").ok());
  const std::pair<std::string, std::string> cases[] = {
      {d + "/garbage.key",
       absl::StrCat("TLS: --tls_key ", d,
                    "/garbage.key: no PEM private key (or one protected by a "
                    "passphrase)")},
      {d + "/other.key", absl::StrCat("TLS: --tls_key ", d,
                                      "/other.key is not the key of "
                                      "--tls_cert ",
                                      d, "/server.pem")},
  };
  for (const auto& [key, message] : cases) {
    ProgramRun r =
        Start("server/tracehealth-server",
              {"--data_dir=" + d, "--listen=127.0.0.1:0",
               "--metrics_listen=127.0.0.1:0",
               "--tls_cert=" + d + "/server.pem", "--tls_key=" + key});
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_TRUE(absl::StrContains(r.out, message)) << r.out;
    EXPECT_FALSE(absl::StrContains(r.out, "cannot listen")) << r.out;
  }
  // The right pair starts (and stops on the deadline's SIGKILL).
  auto p = Subprocess::Start(
      {Runfile("server/tracehealth-server"), "--data_dir=" + d,
       "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
       "--port_file=" + d + "/ports", "--tls_cert=" + d + "/server.pem",
       "--tls_key=" + d + "/server.key"},
      d + "/good.log");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(WaitForFile(d + "/ports", absl::Seconds(30)).ok())
      << *ReadFile(d + "/good.log");
}

TEST(ProgramCliTest, AgentWarnsOfAnIgnoredServerAndARootWithoutProc) {
  const std::string fixture = Runfile("tests/fixtures/hosts/kprobe-multi-6.14");
  ProgramRun once = Start(
      "agent/tracehealth-agent",
      {"--once", "--root=" + fixture, "--host_id=h", "--server=central:7443"});
  EXPECT_EQ(once.code, 0) << once.out;
  EXPECT_TRUE(absl::StrContains(
      once.out,
      "tracehealth-agent: warning: --once prints this host's report and sends "
      "nothing: --server=central:7443 is ignored\n"))
      << once.out;
  const std::string empty = NewTempDir("not-a-host");
  ProgramRun wrong = Start("agent/tracehealth-agent",
                           {"--once", "--root=" + empty, "--host_id=h"});
  EXPECT_EQ(wrong.code, 0) << wrong.out;
  EXPECT_TRUE(absl::StrContains(
      wrong.out, absl::StrCat("tracehealth-agent: warning: --root=", empty,
                              " has no proc/ directory: every /proc input "
                              "will be unknown\n")))
      << wrong.out;
  // The fixture has one: no such warning.
  EXPECT_FALSE(absl::StrContains(once.out, "no proc/ directory")) << once.out;
}

}  // namespace
}  // namespace tracehealth::testing
