#include "tools/tracehealthctl/model_command.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth {
namespace {

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result RunCommand(const std::vector<std::string>& args, bool json,
                  const ModelFlags& flags) {
  std::ostringstream out, err;
  int code = RunModelCommand(args, json, flags, out, err);
  return {code, out.str(), err.str()};
}

TEST(ModelCommandTest, FgraphTextForTheSeedHost) {
  ModelFlags f;
  f.threads = 400000;
  f.batch = 32;
  f.preempt = "none";
  f.kernel = "6.16.0";
  f.probe = "kprobe_multi_return";
  Result r = RunCommand({"fgraph"}, false, f);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kprobe_multi return"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("passes 12500"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("risk stall"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("soft lockup"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("threads.total = 400000 [given]"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("batch = 32 [given]"), std::string::npos) << r.out;
}

// `tracehealthctl model fgraph --kernel 6.1.0 --preempt voluntary
// --threads 128000`: each pass's GFP_KERNEL allocations reach
// might_resched(), so the longest stretch is one pass (88.7 ns * 128,000 +
// 2 us = 11.36 ms), not the 22.7 s walk: latency, no soft lockup.
TEST(ModelCommandTest, VoluntaryAt128kThreadsIsNoSoftLockup) {
  ModelFlags f;
  f.kernel = "6.1.0";
  f.preempt = "voluntary";
  f.threads = 128000;
  f.probe = "function_graph";
  Result r = RunCommand({"fgraph"}, true, f);
  ASSERT_EQ(r.code, 0) << r.err;
  v1::Predictions p;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &p).ok())
      << r.out;
  ASSERT_EQ(p.attach_size(), 1);
  const v1::AttachPrediction& fg = p.attach(0);
  EXPECT_EQ(fg.risk(), v1::RISK_LATENCY);
  // The walk reschedules every pass (11.36 ms); the longest stretch without
  // a reschedule point is the patching of the default 50,000 sites at 1 us
  // (ftrace_replace_code() does not reschedule on x86 or an unknown arch).
  EXPECT_NEAR(fg.non_yielding_seconds(), 0.05, 1e-9);
  for (const v1::ThresholdCheck& c : fg.checks()) {
    EXPECT_LT(c.margin(), 0.01) << c.kind();
  }
  r = RunCommand({"fgraph"}, false, f);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("risk latency"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("predicts a soft lockup"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PREEMPT_VOLUNTARY reschedules every pass"),
            std::string::npos)
      << r.out;
  // The same on PREEMPT_NONE is a soft lockup.
  f.preempt = "none";
  r = RunCommand({"fgraph"}, false, f);
  EXPECT_NE(r.out.find("predicts a soft lockup"), std::string::npos) << r.out;
}

// PREEMPT_DYNAMIC booted none with CONFIG_PREEMPT_RCU=y: a soft lockup,
// and the RCU check only sees one pass.
TEST(ModelCommandTest, DynamicNoneFlags) {
  ModelFlags f;
  f.kernel = "6.1.0";
  f.preempt = "none";
  f.preempt_dynamic = true;
  f.preempt_rcu = true;
  f.cpu_model = "QEMU TCG CPU version 2.5+";
  f.threads = 200000;
  f.probe = "function_graph";
  Result r = RunCommand({"fgraph"}, true, f);
  ASSERT_EQ(r.code, 0) << r.err;
  v1::Predictions p;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &p).ok());
  const v1::AttachPrediction& fg = p.attach(0);
  EXPECT_EQ(fg.risk(), v1::RISK_STALL);
  EXPECT_EQ(fg.cpu_class(), v1::CPU_CLASS_EMULATED);
  for (const v1::ThresholdCheck& c : fg.checks()) {
    if (c.kind() == v1::ThresholdCheck::KIND_RCU_STALL) {
      EXPECT_NEAR(c.predicted(), 88.7e-9 * 200000 + 2e-6, 1e-12);
    }
  }
  // Given false, the same host reads as PREEMPT_RCU=n.
  f.preempt_rcu = false;
  r = RunCommand({"fgraph"}, false, f);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel.config_preempt_rcu = n [given]"),
            std::string::npos)
      << r.out;
}

TEST(ModelCommandTest, FgraphJsonRoundTrips) {
  ModelFlags f;
  f.threads = 400080;
  f.batch = 1024;
  f.preempt = "lazy";
  f.kernel = "6.18.2";
  f.sites = 0;
  Result r = RunCommand({"fgraph"}, true, f);
  ASSERT_EQ(r.code, 0) << r.err;
  v1::Predictions p;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &p).ok())
      << r.out;
  ASSERT_EQ(p.attach_size(), 10);  // every kind by default
  const v1::AttachPrediction& fg = p.attach(0);
  EXPECT_EQ(fg.probe_kind(), v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
  EXPECT_EQ(fg.passes(), 391u);
  EXPECT_NEAR(fg.latency_seconds() / 7.25, 1.0, 0.10);
  EXPECT_EQ(fg.risk(), v1::RISK_LATENCY);
  // kprobe_multi entry-only on 6.18.2 still pays; kretprobe never does.
  EXPECT_TRUE(p.attach(3).uses_fgraph());
  EXPECT_FALSE(p.attach(8).uses_fgraph());
  bool batch_given = false;
  for (const auto& in : fg.basis().inputs()) {
    if (in.name() == "batch")
      batch_given = in.source() == v1::INPUT_SOURCE_OVERRIDDEN;
  }
  EXPECT_TRUE(batch_given);
}

TEST(ModelCommandTest, FgraphDefaultsAreMarked) {
  ModelFlags f;
  f.threads = 1000;
  f.probe = "function_graph";
  Result r = RunCommand({"fgraph"}, false, f);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel.preempt_mode = preemption unknown [default]"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fgraph.available_filter_functions = 50000 [default]"),
            std::string::npos);
}

TEST(ModelCommandTest, VmapSeed004) {
  ModelFlags f;
  f.cpus = 256;
  f.kernel = "6.10.0";
  f.shadow_page_areas = 2804;
  f.preempt = "voluntary";
  Result r = RunCommand({"vmap"}, true, f);
  ASSERT_EQ(r.code, 0) << r.err;
  v1::VmapPurgePrediction p;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &p).ok())
      << r.out;
  EXPECT_EQ(p.flushes_per_purge(), 2805u);
  EXPECT_NEAR(p.purge_seconds() / 23.9, 1.0, 0.15);
  EXPECT_EQ(p.risk(), v1::RISK_STALL);
  f.kernel = "6.13.0";
  r = RunCommand({"vmap"}, false, f);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("flushes 129"), std::string::npos) << r.out;
}

TEST(ModelCommandTest, StackDepotWithHistoryAndShowStacks) {
  ModelFlags f;
  f.pools = 7000;
  f.max_pools = 8192;
  f.history = "0:6000,3600:6500,7200:7000";
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/show_stacks";
  {
    std::ofstream f(path);
    f << " post_alloc_hook+0x177/0x1a0\n get_page_from_freelist+0x6d6/0x2ab0\n"
         " alloc_a+0x10/0x20\nnr_base_pages: 12\n\n"
         " post_alloc_hook+0x177/0x1a0\n get_page_from_freelist+0x6d6/0x2ab0\n"
         " alloc_b+0x10/0x20\nnr_base_pages: 4\n\n";
  }
  f.show_stacks = path;
  f.persistent_count = 400;
  f.persistent_bytes = 128000;
  Result r = RunCommand({"stackdepot"}, true, f);
  ASSERT_EQ(r.code, 0) << r.err;
  v1::StackDepotPrediction p;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &p).ok())
      << r.out;
  EXPECT_NEAR(p.growth_pools_per_second(), 500.0 / 3600, 1e-9);
  EXPECT_NEAR(p.seconds_to_exhaustion(), 1192 / (500.0 / 3600), 1e-6);
  EXPECT_EQ(p.risk(), v1::RISK_WARNING);
  // The trie's ratio measured on the two stacks (hash 2 x ALIGN(32 + 24,
  // 16) = 128 B), applied to the 400 persistent records' 128,000 B.
  EXPECT_EQ(p.trie().source(), v1::TrieEstimate::SOURCE_HOST_TRACES);
  EXPECT_EQ(p.trie().records(), 400u);
  EXPECT_EQ(p.trie().hash_bytes(), 128000u);
  EXPECT_EQ(p.trie().trie_bytes(),
            static_cast<uint64_t>(std::llround(128000 * p.trie().ratio())));

  f.show_stacks = path + ".missing";
  r = RunCommand({"stackdepot"}, false, f);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos);
}

TEST(ModelCommandTest, UsageErrors) {
  ModelFlags f;
  Result r = RunCommand({}, false, f);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("usage"), std::string::npos);
  EXPECT_EQ(RunCommand({"fgraph", "vmap"}, false, f).code, 2);
  r = RunCommand({"bogus"}, false, f);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown model"), std::string::npos);
  f.preempt = "sometimes";
  r = RunCommand({"fgraph"}, false, f);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--preempt"), std::string::npos);
  f.preempt = "";
  f.probe = "uprobe";
  EXPECT_EQ(RunCommand({"fgraph"}, false, f).code, 2);
  f.probe = "";
  f.kernel = "banana";
  EXPECT_EQ(RunCommand({"fgraph"}, false, f).code, 2);
  f.kernel = "";
  f.threads = -5;
  EXPECT_EQ(RunCommand({"fgraph"}, false, f).code, 2);
  // PID_MAX_LIMIT = 4,194,304: one more is no host.
  f.threads = 4194305;
  r = RunCommand({"fgraph"}, false, f);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--threads must be at most 4194304"), std::string::npos)
      << r.err;
  f.threads = 4194304;
  EXPECT_EQ(RunCommand({"fgraph"}, false, f).code, 0);
  f.null_threads = 4194305;
  EXPECT_EQ(RunCommand({"fgraph"}, false, f).code, 2);
  f.null_threads = -1;
  f.threads = -1;
  f.history = "0:1,bad";
  EXPECT_EQ(RunCommand({"stackdepot"}, false, f).code, 2);
  f.history = "";
  f.c_visit_ns = -3.0;
  r = RunCommand({"fgraph"}, false, f);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--c_visit_ns"), std::string::npos);
}

TEST(ModelCommandTest, UnknownThreadsIsAnswerNotError) {
  ModelFlags f;
  f.probe = "function_graph";
  Result r = RunCommand({"fgraph"}, false, f);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("risk unknown"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tracehealth
