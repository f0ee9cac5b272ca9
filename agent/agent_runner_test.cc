#include "agent/agent_runner.h"

#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/testing/test_tree.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

AgentConfig OnceConfig(const TestTree& t) {
  AgentConfig c;
  c.root = t.root();
  c.host_id = "h1";
  c.once = true;
  return c;
}

TEST(AgentRunnerTest, OncePrintsTextOrJson) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.19.0\n");
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/321 99\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunAgent(OnceConfig(t), out, err), 0) << err.str();
  EXPECT_TRUE(absl::StrContains(out.str(), "Threads     321")) << out.str();
  EXPECT_TRUE(absl::StrContains(out.str(), "Unknown inputs")) << out.str();

  AgentConfig json = OnceConfig(t);
  json.format = "json";
  std::ostringstream jout, jerr;
  EXPECT_EQ(RunAgent(json, jout, jerr), 0) << jerr.str();
  EXPECT_TRUE(absl::StrContains(jout.str(), "\"host_id\": \"h1\""))
      << jout.str();
  EXPECT_TRUE(absl::StrContains(jout.str(), "\"total\": \"321\""))
      << jout.str();
}

TEST(AgentRunnerTest, WarnsOfAServerItWillNotUseAndARootWithoutProc) {
  TestTree t;
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/321 99\n");
  AgentConfig c = OnceConfig(t);
  std::ostringstream out, err;
  ASSERT_EQ(RunAgent(c, out, err), 0) << err.str();
  EXPECT_FALSE(absl::StrContains(err.str(), "warning: --")) << err.str();

  c.server = "central:7443";
  std::ostringstream out2, err2;
  ASSERT_EQ(RunAgent(c, out2, err2), 0) << err2.str();
  EXPECT_TRUE(absl::StrContains(
      err2.str(),
      "tracehealth-agent: warning: --once prints this host's report and sends "
      "nothing: --server=central:7443 is ignored\n"))
      << err2.str();

  TestTree empty;
  empty.Write("/etc/hostname", "x\n");  // a tree, but no proc/
  AgentConfig wrong = OnceConfig(empty);
  std::ostringstream out3, err3;
  ASSERT_EQ(RunAgent(wrong, out3, err3), 0) << err3.str();
  EXPECT_TRUE(absl::StrContains(
      err3.str(),
      absl::StrCat("tracehealth-agent: warning: --root=", empty.root(),
                   " has no proc/ directory: every /proc input "
                   "will be unknown\n")))
      << err3.str();
}

TEST(AgentRunnerTest, RejectsBadConfiguration) {
  TestTree t;
  auto run = [&](AgentConfig c) {
    std::ostringstream out, err;
    int rc = RunAgent(c, out, err);
    EXPECT_FALSE(err.str().empty());
    return rc;
  };
  AgentConfig c = OnceConfig(t);
  c.format = "yaml";
  EXPECT_EQ(run(c), 2);
  c = OnceConfig(t);
  c.interval = absl::ZeroDuration();
  EXPECT_EQ(run(c), 2);
  c = OnceConfig(t);
  c.labels = {{std::string(64, 'k'), "v"}};
  EXPECT_EQ(run(c), 2);
  c = OnceConfig(t);
  c.tls_key = "/k.pem";
  EXPECT_EQ(run(c), 2);
  // A long-running agent needs a usable state directory.
  c = OnceConfig(t);
  c.once = false;
  c.state_dir = t.root() + "/proc/loadavg/not-a-dir";
  t.Write("/proc/loadavg", "x\n");
  EXPECT_EQ(run(c), 1);
}

// The agent starts only with an identity the server accepts
// (common/host_identity.h): "." and ".." were accepted here and refused on
// every report.
TEST(AgentRunnerTest, HostIdAndLabelsFollowTheServersRules) {
  TestTree t;
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/50 99\n");
  auto run = [&](AgentConfig c, std::string* err_text) {
    std::ostringstream out, err;
    int rc = RunAgent(c, out, err);
    *err_text = err.str();
    return rc;
  };
  std::string err;
  for (const std::string& id : {std::string("."), std::string(".."),
                                std::string(254, 'h'), std::string("a b")}) {
    AgentConfig c = OnceConfig(t);
    c.host_id = id;
    EXPECT_EQ(run(c, &err), 2) << id;
    EXPECT_TRUE(absl::StrContains(err, "host id")) << err;
  }
  AgentConfig c = OnceConfig(t);
  c.host_id = std::string(253, 'h');
  EXPECT_EQ(run(c, &err), 0) << err;

  c = OnceConfig(t);
  c.labels = {{"rack-1", "a"}};  // '-' is not allowed in a label key
  EXPECT_EQ(run(c, &err), 2);
  EXPECT_TRUE(absl::StrContains(err, "label 'rack-1'")) << err;
  c.labels = {{std::string(63, 'k'), std::string(255, 'v')}};
  EXPECT_EQ(run(c, &err), 0) << err;
  c.labels = {{"rack", std::string(256, 'v')}};
  EXPECT_EQ(run(c, &err), 2);
}

// Without --host_id: the hostname; "(none)" (no hostname set) is shown as
// it is by --once, and an agent whose reports leave the process derives an
// id from /etc/machine-id or says to pass --host_id.
TEST(AgentRunnerTest, DefaultHostIdWithHostnameNone) {
  TestTree t;
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/50 99\n");
  t.Write("/proc/sys/kernel/hostname", "(none)\n");
  auto run = [&](AgentConfig c, std::string* out_text, std::string* err_text) {
    std::ostringstream out, err;
    int rc = RunAgent(c, out, err);
    *out_text = out.str();
    *err_text = err.str();
    return rc;
  };
  std::string out, err;
  AgentConfig once = OnceConfig(t);
  once.host_id = "";
  EXPECT_EQ(run(once, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, " - host (none)\n")) << out;

  // Printing every interval keeps a seq: a valid id is needed.
  AgentConfig loop = once;
  loop.once = false;
  loop.state_dir = t.root() + "/state";
  loop.interval = absl::Milliseconds(1);
  loop.max_reports = 1;
  EXPECT_EQ(run(loop, &out, &err), 2);
  EXPECT_EQ(err,
            "tracehealth-agent: hostname '(none)' is no valid host id "
            "([A-Za-z0-9._-]{1,253}, not dots only) and no id can be derived "
            "from /etc/machine-id (missing): pass --host_id=NAME\n");
  t.Write("/etc/machine-id", "0123\n");
  EXPECT_EQ(run(loop, &out, &err), 2);
  EXPECT_TRUE(absl::StrContains(
      err, "(it is not 32 hexadecimal digits): pass --host_id=NAME"))
      << err;
  // systemd-id128 machine-id --app-specific=fe107386b6e54873b921257ea367a540
  // with this machine id.
  t.Write("/etc/machine-id", "5c1f0e3a9b2d4c6e8f7a1b2c3d4e5f60\n");
  EXPECT_EQ(run(loop, &out, &err), 0) << err;
  EXPECT_TRUE(
      absl::StrContains(out, " - host f8587c26b1d446a7818c4a010bcf7578\n"))
      << out;
  EXPECT_TRUE(absl::StrContains(err,
                                "host id f8587c26b1d446a7818c4a010bcf7578 "
                                "(from /etc/machine-id; the hostname is no "
                                "valid host id)"))
      << err;
  // A given --host_id is used as it is.
  loop.host_id = "guest-3";
  EXPECT_EQ(run(loop, &out, &err), 0) << err;
  EXPECT_TRUE(absl::StrContains(out, " - host guest-3\n")) << out;
}

// Reports carry the override's rows and the file's digest, and nothing when
// the file has no rows (the packaged agent's default file).
TEST(AgentRunnerTest, FeatureTableOverrideGoesIntoTheReport) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.12.5\n");
  t.Write("/rows.yaml",
          "features:\n  kasan_flush_combined:\n    since: \"6.12\"\n");
  t.Write("/empty.yaml", "# no rows\nfeatures: {}\n");
  AgentConfig c = OnceConfig(t);
  c.format = "json";
  c.feature_table = t.root() + "/rows.yaml";
  std::ostringstream out, err;
  ASSERT_EQ(RunAgent(c, out, err), 0) << err.str();
  // sha256sum of the 52 bytes of rows.yaml.
  EXPECT_TRUE(absl::StrContains(
      out.str(),
      "\"digest\": \"sha256:"
      "3207a7f00eddd2be84d634f6f08210b1fa92f70c62cc4eb8f7717a04f564634a\""))
      << out.str();
  EXPECT_TRUE(
      absl::StrContains(out.str(), "\"name\": \"kasan_flush_combined\""))
      << out.str();
  c.feature_table = t.root() + "/empty.yaml";
  std::ostringstream out2, err2;
  ASSERT_EQ(RunAgent(c, out2, err2), 0) << err2.str();
  EXPECT_FALSE(absl::StrContains(out2.str(), "feature_table_override"))
      << out2.str();
  c.feature_table = t.root() + "/missing.yaml";
  std::ostringstream out3, err3;
  EXPECT_EQ(RunAgent(c, out3, err3), 2);
  EXPECT_TRUE(absl::StrContains(err3.str(), "--feature_table")) << err3.str();
}

// An agent that runs `reports` cycles 10 ms apart, without a server.
AgentConfig LoopConfig(const TestTree& t, uint64_t reports) {
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/50 99\n");
  AgentConfig c = OnceConfig(t);
  c.once = false;
  c.state_dir = t.root() + "/state";
  c.interval = absl::Milliseconds(10);
  c.max_reports = reports;
  return c;
}

TEST(AgentRunnerTest, PrintsEachIntervalWithoutAServer) {
  TestTree t;
  AgentConfig c = LoopConfig(t, 3);
  std::ostringstream out, err;
  EXPECT_EQ(RunAgent(c, out, err), 0) << err.str();
  size_t count = 0;
  for (size_t p = out.str().find("Threads     50"); p != std::string::npos;
       p = out.str().find("Threads     50", p + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 3u);
  EXPECT_TRUE(
      absl::StrContains(err.str(), "stopped after 3 reports (seq 1..3)"))
      << err.str();
}

TEST(AgentRunnerTest, LocalSocketOptions) {
  TestTree t;
  AgentConfig c = LoopConfig(t, 1);
  // An unknown group is a configuration error.
  c.local_socket_group = "no-such-group-here";
  std::ostringstream out, err;
  EXPECT_EQ(RunAgent(c, out, err), 2);
  EXPECT_EQ(err.str(),
            "tracehealth-agent: --local_socket_group: no group "
            "'no-such-group-here'\n");
  // A socket the operator named must work.
  c.local_socket_group.clear();
  c.local_socket = t.root() + "/no/such/dir/gate.sock";
  std::ostringstream out2, err2;
  EXPECT_EQ(RunAgent(c, out2, err2), 1);
  EXPECT_TRUE(absl::StrContains(
      err2.str(),
      "tracehealth-agent: --local_socket: " + t.root() + "/no/such/dir"))
      << err2.str();
  // The default one only warns: the agent goes on; "none" serves nothing.
  c.local_socket.clear();
  c.state_dir = t.root() + "/state";
  t.Write("/state/gate.sock/x", "");  // a directory where the socket goes
  std::ostringstream out3, err3;
  EXPECT_EQ(RunAgent(c, out3, err3), 0);
  EXPECT_TRUE(absl::StrContains(
      err3.str(), "tracehealth-agent: warning: --local_socket: " + t.root() +
                      "/state/gate.sock: exists and is not a socket; no "
                      "local gate\n"))
      << err3.str();
  c.local_socket = "none";
  std::ostringstream out4, err4;
  EXPECT_EQ(RunAgent(c, out4, err4), 0);
  EXPECT_FALSE(absl::StrContains(err4.str(), "local_socket")) << err4.str();
}

// A calibration in the state directory (as --calibrate stores it): later
// runs price the walk with its c_visit and fixed cost, name it in the
// basis, and carry it in the report; one from another kernel family is not
// used.
TEST(AgentRunnerTest, LaterRunsUseTheStoredCalibration) {
  TestTree t;
  t.Write("/proc/sys/kernel/osrelease", "6.1.0-28-cloud-amd64\n");
  t.Write("/proc/loadavg", "0.00 0.00 0.00 1/3200 99\n");
  TestTree state;
  // 2026-12-01T15:40:00Z.
  state.Write("/calibration.json",
              "{\"c_visit_seconds\": 1.25e-07, \"fixed_seconds\": 4e-05, "
              "\"threads\": 9000, \"kernel_release\": "
              "\"6.1.0-27-cloud-amd64\", \"measured_at\": "
              "\"2026-12-01T15:40:00Z\"}\n");
  AgentConfig c = OnceConfig(t);
  c.state_dir = state.root();
  c.format = "json";
  std::ostringstream out, err;
  ASSERT_EQ(RunAgent(c, out, err), 0) << err.str();
  // The JSON without its line breaks and indentation.
  std::string flat;
  for (absl::string_view line : absl::StrSplit(out.str(), '\n')) {
    absl::StrAppend(&flat, absl::StripLeadingAsciiWhitespace(line));
  }
  EXPECT_TRUE(absl::StrContains(
      flat, R"("name": "c_visit","value": 1.25e-07,"unit": "s",)"
            R"("origin": "this host's calibration 2026-12-01T15:40:00Z",)"
            R"("anchor": "ANCHOR_CALIBRATED")"))
      << out.str();
  EXPECT_TRUE(absl::StrContains(
      flat, R"("name": "c_fixed","value": 4e-05,"unit": "s",)"));
  EXPECT_TRUE(absl::StrContains(out.str(), R"("calibration": {)")) << out.str();

  // Rebooted into 6.12: the 6.1 calibration does not apply.
  t.Write("/proc/sys/kernel/osrelease", "6.12.0-1-cloud-amd64\n");
  std::ostringstream out2, err2;
  ASSERT_EQ(RunAgent(c, out2, err2), 0) << err2.str();
  EXPECT_TRUE(absl::StrContains(
      err2.str(),
      "warning: calibration not used: it was measured on "
      "6.1.0-27-cloud-amd64, this host runs 6.12.0-1-cloud-amd64\n"))
      << err2.str();
  EXPECT_FALSE(absl::StrContains(out2.str(), "this host's calibration"));
  EXPECT_TRUE(absl::StrContains(out2.str(), "\"origin\": \"seed default: "))
      << out2.str();
  EXPECT_FALSE(absl::StrContains(out2.str(), R"("calibration": {)"));
}

TEST(AgentRunnerTest, CalibrateFlagsAreChecked) {
  TestTree t;
  AgentConfig c = OnceConfig(t);
  c.calibrate = true;
  std::ostringstream out, err;
  EXPECT_EQ(RunAgent(c, out, err), 2);
  EXPECT_TRUE(absl::StrContains(err.str(), "--calibrate and --once"));
  c.once = false;
  c.calibrate_budget = absl::ZeroDuration();
  std::ostringstream out2, err2;
  EXPECT_EQ(RunAgent(c, out2, err2), 2);
  EXPECT_TRUE(
      absl::StrContains(err2.str(), "--calibrate_budget must be positive"));
  c.calibrate_budget = absl::Seconds(1);
  c.calibrate_threads = 32769;
  std::ostringstream out3, err3;
  EXPECT_EQ(RunAgent(c, out3, err3), 2);
  EXPECT_TRUE(
      absl::StrContains(err3.str(), "--calibrate_threads: at most 32768"));
}

}  // namespace
}  // namespace tracehealth::agent
