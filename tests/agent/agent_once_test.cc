// `tracehealth-agent --once`: readable text and protobuf JSON, on fixture
// trees and on this machine; bad flags are refused with exit code 2.
#include <sys/utsname.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/report.pb.h"
#include "tests/agent/fixture_util.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

struct Result {
  int rc = -1;
  std::string out;  // stdout: the report
  std::string err;  // stderr: warnings and errors
};

Result RunAgent(std::vector<std::string> args) {
  std::string dir = NewTempDir("once-");
  std::string log = dir + "/out";
  args.insert(args.begin(), Runfile("agent/tracehealth-agent"));
  args.push_back("--state_dir=" + dir + "/state");
  // stderr apart, so that a warning (e.g. a kernel log this user may not
  // read) does not end up inside the JSON.
  args.insert(args.begin(),
              {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>>" + dir + "/err"});
  auto p = Subprocess::Start(args, log);
  EXPECT_TRUE(p.ok()) << p.status();
  Result r;
  auto rc = (*p)->Wait(absl::Seconds(60));
  EXPECT_TRUE(rc.ok()) << rc.status();
  r.rc = rc.ok() ? *rc : -1;
  r.out = ReadFile(log).value_or("");
  r.err = ReadFile(dir + "/err").value_or("");
  return r;
}

std::string Fixture(const std::string& name) {
  return "--root=" + Runfile("tests/fixtures/hosts/" + name);
}

TEST(AgentOnceTest, ReadableTextOnAFixture) {
  Result r = RunAgent({"--once", Fixture("kasan-6.12-256cpu"), "--host_id=k1"});
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const char* want :
       {"host k1", "Kernel      6.12.3 x86_64", "Preemption  none",
        "Threads     61000", "256 online", "fgraph      inactive",
        "First attach of each probe kind", "function_graph tracer", "kretprobe",
        "Stack depot 7950 of 8192 pools", "vmap purge  3000 unpurged",
        "Worst risk  STALL"}) {
    EXPECT_TRUE(absl::StrContains(r.out, want)) << want << "\n" << r.out;
  }
}

TEST(AgentOnceTest, JsonIsTheHostReport) {
  Result r = RunAgent({"--once", "--format=json", Fixture("kprobe-multi-6.14"),
                       "--host_id=k2", "--labels=rack=r7,role=db"});
  ASSERT_EQ(r.rc, 0) << r.out;
  v1::HostReport report;
  auto st = google::protobuf::util::JsonStringToMessage(r.out, &report);
  ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << r.out;
  EXPECT_EQ(report.host_id(), "k2");
  EXPECT_EQ(report.labels().at("rack"), "r7");
  EXPECT_EQ(report.snapshot().threads().total(), 12000u);
  EXPECT_EQ(report.snapshot().fgraph().kprobe_multi_links_size(), 1);
  EXPECT_EQ(report.predictions().attach_size(), 10);
  EXPECT_FALSE(report.model_version().empty());
  EXPECT_GT(report.health().cycle_seconds(), 0);
}

TEST(AgentOnceTest, WorksOnThisMachine) {
  Result r = RunAgent({"--once", "--format=json"});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  v1::HostReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok())
      << r.out;
  struct utsname u;
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(report.snapshot().kernel().release(), u.release);
  EXPECT_GT(report.snapshot().threads().total(), 0u);
  // The kernel log was read, or the report says why not (and the agent
  // warned once).
  ASSERT_TRUE(report.health().has_kmsg());
  const v1::KmsgHealth& kmsg = report.health().kmsg();
  if (kmsg.error().empty()) {
    EXPECT_GT(kmsg.records_total(), 0u);
  } else {
    EXPECT_TRUE(absl::StrContains(r.err, "kernel log: " + kmsg.error()))
        << r.err;
  }
  Result text = RunAgent({"--once"});
  EXPECT_EQ(text.rc, 0);
  EXPECT_TRUE(absl::StrContains(text.out, "First attach of each probe kind"));
}

// The machine test's checks on a copy of a fixture host whose files hold
// values written here, kernel log included: each must be reported as is.
TEST(AgentOnceTest, JsonCarriesTheKnownValuesOfAFixtureCopy) {
  const std::string root = CopyFixture("preempt-none-6.16-240k");
  auto write = [&](const std::string& path, const std::string& text) {
    ASSERT_TRUE(WriteFile(root + path, text).ok()) << path;
  };
  write("/proc/sys/kernel/osrelease", "6.16.7-once\n");
  write("/proc/loadavg", "1.00 1.00 1.00 3/54321 999\n");
  // Three records, one of them with a dictionary line.
  ASSERT_TRUE(std::filesystem::create_directories(root + "/dev") ||
              std::filesystem::is_directory(root + "/dev"));
  write("/dev/kmsg",
        "6,1,1000,-;first\n"
        "6,2,2000,-;second\n SUBSYSTEM=x\n"
        "4,3,3000,-;third\n");
  Result r = RunAgent({"--once", "--format=json", "--root=" + root});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  v1::HostReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok())
      << r.out;
  EXPECT_EQ(report.snapshot().kernel().release(), "6.16.7-once");
  EXPECT_EQ(report.snapshot().threads().total(), 54321u);
  EXPECT_EQ(report.snapshot().threads().running(), 3u);
  ASSERT_TRUE(report.health().has_kmsg());
  EXPECT_EQ(report.health().kmsg().error(), "");
  EXPECT_EQ(report.health().kmsg().records_total(), 3u);
  EXPECT_EQ(r.err.find("kernel log:"), std::string::npos) << r.err;

  // Without the kernel log the report says why; a missing log (as on most
  // fixtures) is not worth a warning, an unreadable one is, once.
  ASSERT_TRUE(std::filesystem::remove(root + "/dev/kmsg"));
  r = RunAgent({"--once", "--format=json", "--root=" + root});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok())
      << r.out;
  EXPECT_EQ(report.health().kmsg().error(),
            "/dev/kmsg: No such file or directory");
  EXPECT_EQ(report.health().kmsg().records_total(), 0u);
  EXPECT_EQ(r.err.find("kernel log:"), std::string::npos) << r.err;
  ASSERT_TRUE(std::filesystem::create_directory(root + "/dev/kmsg"));
  r = RunAgent({"--once", "--format=json", "--root=" + root});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok())
      << r.out;
  const std::string error = report.health().kmsg().error();
  EXPECT_TRUE(absl::StartsWith(error, "/dev/kmsg: ")) << error;
  EXPECT_NE(error, "/dev/kmsg: No such file or directory");
  const std::string warning = "kernel log: " + error;
  const size_t at = r.err.find(warning);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning, at + 1), std::string::npos) << r.err;
}

TEST(AgentOnceTest, BadFlagsExitTwo) {
  EXPECT_EQ(RunAgent({"--once", "--format=xml"}).rc, 2);
  EXPECT_EQ(RunAgent({"--once", "--host_id=not a host"}).rc, 2);
  EXPECT_EQ(RunAgent({"--once", "--labels=novalue"}).rc, 2);
  EXPECT_EQ(RunAgent({"--once", "--feature_table=/nonexistent.yaml"}).rc, 2);
  EXPECT_EQ(RunAgent({"--once", "--tls_cert=/x.pem"}).rc, 2);
  EXPECT_EQ(RunAgent({"--once", "stray-argument"}).rc, 2);
}

// The 6.1 guest's hostname is the kernel's "(none)" and it has no
// /etc/machine-id: --once shows it; streaming needs --host_id, or a machine
// id to derive one from.
TEST(AgentOnceTest, HostnameNone) {
  Result r = RunAgent({"--once", Fixture("no-tracefs")});
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, ") - host (none)\n")) << r.out;
  Result json = RunAgent({"--once", "--format=json", Fixture("no-tracefs")});
  ASSERT_EQ(json.rc, 0) << json.out;
  EXPECT_TRUE(absl::StrContains(json.out, "\"host_id\": \"(none)\""))
      << json.out;

  const std::vector<std::string> stream = {"--server=127.0.0.1:1",
                                           "--max_reports=1", "--interval=1ms",
                                           "--shutdown_flush_timeout=0s"};
  std::vector<std::string> args = stream;
  args.push_back(Fixture("no-tracefs"));
  Result s = RunAgent(args);
  EXPECT_EQ(s.rc, 2) << s.err;
  EXPECT_TRUE(absl::StrContains(
      s.err,
      "hostname '(none)' is no valid host id ([A-Za-z0-9._-]{1,253}, "
      "not dots only) and no id can be derived from /etc/machine-id "
      "(missing): pass --host_id=NAME"))
      << s.err;

  std::string root = CopyFixture("no-tracefs");
  ASSERT_TRUE(
      WriteFile(root + "/etc/machine-id", "5c1f0e3a9b2d4c6e8f7a1b2c3d4e5f60\n")
          .ok());
  args = stream;
  args.push_back("--root=" + root);
  Result derived = RunAgent(args);
  EXPECT_EQ(derived.rc, 0) << derived.err;
  // systemd-id128 machine-id --app-specific=fe107386b6e54873b921257ea367a540.
  EXPECT_TRUE(
      absl::StrContains(derived.err,
                        "host id f8587c26b1d446a7818c4a010bcf7578 (from "
                        "/etc/machine-id; the hostname is no valid host id)"))
      << derived.err;
}

TEST(AgentOnceTest, FeatureTableOverrideChangesThePrediction) {
  // A vendor 6.12 kernel with fprobe on fgraph backported.
  std::string dir = NewTempDir("ft-");
  ASSERT_TRUE(WriteFile(dir + "/features.yaml",
                        "features:\n  fprobe_on_fgraph:\n"
                        "    description: vendor backport\n"
                        "    since: \"6.14\"\n    backports: [\"6.12.1\"]\n")
                  .ok());
  Result base =
      RunAgent({"--once", "--format=json", Fixture("kasan-6.12-256cpu")});
  Result vendor =
      RunAgent({"--once", "--format=json", Fixture("kasan-6.12-256cpu"),
                "--feature_table=" + dir + "/features.yaml"});
  ASSERT_EQ(base.rc, 0) << base.out;
  ASSERT_EQ(vendor.rc, 0) << vendor.out;
  v1::HostReport b, v;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(base.out, &b).ok());
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(vendor.out, &v).ok());
  const int kKprobeMultiReturn = v1::PROBE_KIND_KPROBE_MULTI_RETURN - 1;
  EXPECT_FALSE(b.predictions().attach(kKprobeMultiReturn).uses_fgraph());
  EXPECT_TRUE(v.predictions().attach(kKprobeMultiReturn).uses_fgraph());
}

}  // namespace
}  // namespace tracehealth::testing
