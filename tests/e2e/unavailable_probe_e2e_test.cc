// End to end: `tracehealthctl predict` for a probe kind the host's kernel
// lacks says the attach is unavailable, not safe.
//
// Two agents report once to the real server from copies of the
// preempt-none-6.16-240k fixture (6.16, PREEMPT_NONE in effect, 240,000
// threads without a shadow stack): "fprobe-on" as it is (CONFIG_FPROBE=y),
// "fprobe-off" with CONFIG_FPROBE unset in its /proc/config.gz. On 6.16,
// kprobe_multi_return runs on fgraph: with CONFIG_FPROBE it walks every
// thread (a predicted stall); without it the kind does not exist, nothing
// walks, and the attach would fail (AttachPrediction.unavailable).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "tests/agent/fixture_util.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr char kFixture[] = "preempt-none-6.16-240k";
constexpr char kUnavailable[] =
    "unavailable: this probe kind does not exist on this kernel (a config "
    "option off, or a release before it); the attach would fail";

struct Exit {
  int code = -1;
  std::string out;
};

Exit Start(const std::vector<std::string>& argv, const std::string& log,
           absl::Duration timeout) {
  auto p = Subprocess::Start(argv, log);
  if (!p.ok()) return {};
  absl::StatusOr<int> rc = (*p)->Wait(timeout);
  return {rc.ok() ? *rc : -1, ReadFile(log).value_or("")};
}

// Runs one agent cycle of `root` as `host_id`, reporting to `server`.
void ReportOnce(const std::string& root, const std::string& host_id,
                const std::string& dir, const std::string& server) {
  Exit r =
      Start({Runfile("agent/tracehealth-agent"), "--root=" + root,
             "--state_dir=" + dir + "/state-" + host_id, "--host_id=" + host_id,
             "--server=" + server, "--interval=200ms", "--max_reports=1",
             "--shutdown_flush_timeout=30s", "--local_socket=none",
             "--kernel_log=false"},
            dir + "/agent-" + host_id + ".log", absl::Seconds(60));
  ASSERT_EQ(r.code, 0) << r.out;
}

Exit Ctl(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      Runfile("tools/tracehealthctl/tracehealthctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Start(argv, dir + "/ctl.out", absl::Seconds(30));
}

TEST(UnavailableProbeEndToEndTest, PredictSaysUnavailableNotSafe) {
  const std::string dir = NewTempDir("unavailable-probe-e2e");
  std::filesystem::create_directories(dir + "/server");
  absl::StatusOr<ServerProcess> sp = StartServer(dir + "/server");
  ASSERT_TRUE(sp.ok()) << sp.status();

  const std::string on = CopyFixture(kFixture);
  const std::string off = CopyFixture(kFixture);
  // CONFIG_FPROBE off, in the kernel's own words for an unset option.
  const std::string config = off + "/proc/config.gz";
  Exit edit = Start(
      {"/bin/sh", "-c",
       absl::StrCat("gzip -dc '", config,
                    "' | sed 's/^CONFIG_FPROBE=y$/# CONFIG_FPROBE is not set/' "
                    "| gzip > '",
                    config, ".new' && mv '", config, ".new' '", config,
                    "' && gzip -dc '", config, "' | grep -c '^CONFIG_FPROBE='",
                    " || true")},
      dir + "/edit.log", absl::Seconds(30));
  ASSERT_EQ(edit.code, 0) << edit.out;
  ASSERT_EQ(edit.out, "0\n");  // no CONFIG_FPROBE=y left
  ReportOnce(on, "fprobe-on", dir, sp->grpc_addr);
  ReportOnce(off, "fprobe-off", dir, sp->grpc_addr);

  const std::string server = "--server=" + sp->grpc_addr;
  Exit json =
      Ctl(dir, {server, "--json", "predict", "--probe=kprobe_multi_return",
                "--hosts=fprobe-off,fprobe-on"});
  ASSERT_EQ(json.code, 0) << json.out;
  v1::PredictAttachResponse resp;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json.out, &resp).ok())
      << json.out;
  ASSERT_EQ(resp.answers_size(), 2) << json.out;
  for (const v1::HostAttachAnswer& a : resp.answers()) {
    const v1::AttachPrediction& p = a.prediction();
    EXPECT_EQ(p.probe_kind(), v1::PROBE_KIND_KPROBE_MULTI_RETURN);
    if (a.host_id() == "fprobe-off") {
      // The kind does not exist: nothing walks, nothing is patched.
      EXPECT_TRUE(p.unavailable());
      EXPECT_FALSE(p.uses_fgraph());
      EXPECT_EQ(p.patch_sites(), 0u);
      EXPECT_EQ(a.recommendation(), kUnavailable);
    } else {
      // The other side: with CONFIG_FPROBE the same kernel walks 240,000
      // threads without preemption: a stall, not unavailable.
      ASSERT_EQ(a.host_id(), "fprobe-on");
      EXPECT_FALSE(p.unavailable());
      EXPECT_TRUE(p.uses_fgraph());
      EXPECT_EQ(p.threads_total(), 240000u);
      EXPECT_EQ(p.risk(), v1::RISK_STALL);
      EXPECT_TRUE(absl::StartsWith(a.recommendation(), "do not attach now: "))
          << a.recommendation();
    }
  }

  // The table people read: the unavailable host's row says so, and no row
  // calls the attach safe.
  Exit table = Ctl(dir, {server, "predict", "--probe=kprobe_multi_return",
                         "--hosts=fprobe-off,fprobe-on"});
  ASSERT_EQ(table.code, 0) << table.out;
  std::printf("%s", table.out.c_str());
  std::string off_row;
  for (absl::string_view line : absl::StrSplit(table.out, '\n')) {
    if (absl::StartsWith(line, "fprobe-off ")) off_row = std::string(line);
  }
  EXPECT_TRUE(absl::EndsWith(off_row, kUnavailable)) << table.out;
  EXPECT_FALSE(absl::StrContains(table.out, "safe to attach")) << table.out;
}

}  // namespace
}  // namespace tracehealth::testing
