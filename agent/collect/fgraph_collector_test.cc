#include "agent/collect/fgraph_collector.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "agent/testing/test_tmp.h"
#include "common/kernel/release.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1800000000);

class FgraphCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override { root_ = TestTempDir("fgraph"); }
  void Write(const std::string& path, const std::string& content) {
    std::string full = root_ + path;
    for (size_t p = full.find('/', root_.size() + 1); p != std::string::npos;
         p = full.find('/', p + 1)) {
      mkdir(full.substr(0, p).c_str(), 0755);
    }
    std::ofstream(full) << content;
  }
  void Link(const std::string& path, const std::string& target) {
    Write(path + ".tmp", "");
    unlink((root_ + path + ".tmp").c_str());
    ASSERT_EQ(symlink(target.c_str(), (root_ + path).c_str()), 0);
  }
  void Tracefs() {
    Write("/sys/kernel/tracing/current_tracer", "nop\n");
    Write("/sys/kernel/tracing/available_filter_functions", "a\nb\nc\n");
    Write("/sys/kernel/tracing/enabled_functions", "");
    Write("/proc/1/comm", "init\n");
  }
  v1::FgraphState Collect(FgraphCollector* c, const char* release,
                          absl::Time now = kT0) {
    unknown_.Clear();
    v1::FgraphState out;
    std::optional<KernelRelease> r;
    if (release != nullptr) r = *ParseKernelRelease(release);
    c->Collect(std::string("/sys/kernel/tracing"), r, "", now, &out, &unknown_);
    return out;
  }
  std::string Unknown(const std::string& input) {
    for (const auto& u : unknown_) {
      if (u.input() == input) return u.reason();
    }
    return "";
  }

  std::string root_;
  google::protobuf::RepeatedPtrField<v1::UnknownInput> unknown_;
};

TEST_F(FgraphCollectorTest, TracersInInstancesAndTheProfiler) {
  Tracefs();
  Write("/sys/kernel/tracing/function_profile_enabled", "1\n");
  Write("/sys/kernel/tracing/instances/a/current_tracer", "irqsoff\n");
  Write("/sys/kernel/tracing/instances/a/options/display-graph", "1\n");
  Write("/sys/kernel/tracing/instances/b/current_tracer", "function\n");
  Write("/sys/kernel/tracing/instances/b/options/display-graph", "1\n");
  Write("/sys/kernel/tracing/instances/c/current_tracer", "wakeup\n");
  Write("/sys/kernel/tracing/instances/c/options/display-graph", "0\n");
  HostFs fs(root_);
  FgraphCollector c(&fs, &FeatureTable::Builtin(), {});
  v1::FgraphState s = Collect(&c, "6.12.0");
  ASSERT_EQ(s.users_size(), 2);
  EXPECT_EQ(s.users(0).kind(), v1::FgraphUser::KIND_GRAPH_LATENCY_TRACER);
  EXPECT_EQ(s.users(0).where(), "a: irqsoff");
  EXPECT_EQ(s.users(1).kind(), v1::FgraphUser::KIND_FUNCTION_PROFILER);
  EXPECT_TRUE(s.active());
  EXPECT_EQ(s.available_filter_functions(), 3u);
  EXPECT_EQ(s.enabled_functions(), 0u);
}

TEST_F(FgraphCollectorTest, FprobeEventsDependOnTheKernel) {
  Tracefs();
  Write("/sys/kernel/tracing/dynamic_events",
        "f:fprobes/entry vfs_read\n"
        "f:fprobes/exit vfs_read%return ret=$retval\n"
        "p:kprobes/k do_sys_open\n");
  HostFs fs(root_);
  FgraphCollector c(&fs, &FeatureTable::Builtin(), {});
  // Before 6.14 fprobe is not built on fgraph.
  v1::FgraphState old = Collect(&c, "6.12.0");
  EXPECT_EQ(old.users_size(), 0);
  EXPECT_FALSE(old.active());
  // 6.14 .. 6.18: every fprobe.
  v1::FgraphState mid = Collect(&c, "6.16.3");
  EXPECT_EQ(mid.users_size(), 2);
  // 6.19: entry-only fprobes are off fgraph.
  v1::FgraphState now = Collect(&c, "6.19.1");
  ASSERT_EQ(now.users_size(), 1);
  EXPECT_EQ(now.users(0).kind(), v1::FgraphUser::KIND_FPROBE_RETURN_EVENT);
  EXPECT_EQ(now.users(0).where(), "fprobes/exit");
  // Release unknown: assume they are users (worst case).
  EXPECT_EQ(Collect(&c, nullptr).users_size(), 2);
}

TEST_F(FgraphCollectorTest, BpfLinksFoundThroughFdSymlinks) {
  Tracefs();
  Write("/proc/10/comm", "agentd\n");
  Link("/proc/10/fd/3", "anon_inode:bpf_link");
  Write("/proc/10/fdinfo/3",
        "pos:\t0\nflags:\t02000000\nmnt_id:\t15\nino:\t2094\n"
        "link_type:\tkretprobe_multi\nlink_id:\t9\nprog_tag:\tabc\n"
        "prog_id:\t40\nkprobe_cnt:\t12\nmissed:\t0\n");
  // Not a BPF link: its fdinfo is never read (the text would parse as one).
  Link("/proc/10/fd/4", "socket:[4242]");
  Write("/proc/10/fdinfo/4", "link_type:\tkprobe_multi\n");
  HostFs fs(root_);
  FgraphCollector c(&fs, &FeatureTable::Builtin(), {});
  v1::FgraphState s = Collect(&c, "6.17.2");
  ASSERT_EQ(s.kprobe_multi_links_size(), 1);
  EXPECT_EQ(s.kprobe_multi_links(0).fd(), 3u);
  EXPECT_EQ(s.kprobe_multi_links(0).comm(), "agentd");
  EXPECT_TRUE(s.kprobe_multi_links(0).is_return());
  EXPECT_EQ(s.kprobe_multi_links(0).kprobe_count(), 12u);
  ASSERT_EQ(s.users_size(), 1);
  EXPECT_EQ(s.users(0).kind(), v1::FgraphUser::KIND_BPF_KPROBE_MULTI_RETURN);
  EXPECT_EQ(s.users(0).where(), "pid 10 fd 3 (agentd)");
}

TEST_F(FgraphCollectorTest, ScanIsRateLimited) {
  Tracefs();
  HostFs fs(root_);
  FgraphCollectorOptions o;
  o.fdinfo_scan_interval = absl::Minutes(10);
  FgraphCollector c(&fs, &FeatureTable::Builtin(), o);
  EXPECT_EQ(Collect(&c, "6.16.0").kprobe_multi_links_size(), 0);
  // A link appears; the next cycles do not scan until the interval passed.
  Write("/proc/20/fdinfo/5", "link_type:\tkprobe_multi\nkprobe_cnt:\t3\n");
  Write("/proc/20/comm", "x\n");
  v1::FgraphState s = Collect(&c, "6.16.0", kT0 + absl::Minutes(1));
  EXPECT_EQ(s.kprobe_multi_links_size(), 0);
  EXPECT_EQ(s.links_scanned_at().seconds(), absl::ToUnixSeconds(kT0));
  s = Collect(&c, "6.16.0", kT0 + absl::Minutes(10));
  EXPECT_EQ(s.kprobe_multi_links_size(), 1);
  EXPECT_TRUE(s.active());
}

TEST_F(FgraphCollectorTest, TruncatedScanLeavesActivityUnknown) {
  Tracefs();
  for (int fd = 0; fd < 5; ++fd) {
    Write("/proc/30/fdinfo/" + std::to_string(fd), "pos:\t0\n");
  }
  HostFs fs(root_);
  FgraphCollectorOptions o;
  o.fdinfo_max_files = 3;
  FgraphCollector c(&fs, &FeatureTable::Builtin(), o);
  v1::FgraphState s = Collect(&c, "6.16.0");
  EXPECT_FALSE(s.has_active());
  EXPECT_NE(Unknown("fgraph.kprobe_multi_links").find("stopped after 3"),
            std::string::npos);
  EXPECT_NE(Unknown("fgraph.active"), "");
}

TEST_F(FgraphCollectorTest, UnreadableTracerIsUnknown) {
  Write("/sys/kernel/tracing/available_filter_functions", "a\n");
  Write("/sys/kernel/tracing/current_tracer", "not a tracer\n");
  HostFs fs(root_);
  FgraphCollector c(&fs, &FeatureTable::Builtin(), {});
  v1::FgraphState s = Collect(&c, "6.16.0");
  EXPECT_FALSE(s.has_active());
  EXPECT_NE(Unknown("fgraph.current_tracer"), "");
  EXPECT_NE(Unknown("fgraph.enabled_functions"), "");
  EXPECT_EQ(s.available_filter_functions(), 1u);
}

}  // namespace
}  // namespace tracehealth::agent
