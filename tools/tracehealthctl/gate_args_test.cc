#include "tools/tracehealthctl/gate_args.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

std::string Error(const std::vector<std::string>& args) {
  absl::StatusOr<GateArgs> a = ParseGateArgs(args);
  EXPECT_TRUE(absl::IsInvalidArgument(a.status())) << a.status();
  return std::string(a.status().message());
}

TEST(ParseGateArgsTest, Forms) {
  absl::StatusOr<GateArgs> a =
      ParseGateArgs({"gate", "--probe=kprobe_multi_return", "--filter", "vfs_*",
                     "--max_latency=2s", "--socket=/run/g.sock", "--json"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->probe, v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  EXPECT_EQ(*a->filter, "vfs_*");
  EXPECT_FALSE(a->functions.has_value());
  EXPECT_EQ(a->max_latency, absl::Seconds(2));
  EXPECT_EQ(a->socket, "/run/g.sock");
  EXPECT_FALSE(a->root.has_value());
  EXPECT_TRUE(a->json);
  // Flags before "gate", single dashes, plain seconds, --nojson.
  a = ParseGateArgs({"--json", "gate", "-probe", "fentry", "--functions=40",
                     "--max_latency", "0.25", "--root=/tmp/h", "--nojson"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->probe, v1::PROBE_KIND_FENTRY_FEXIT);
  EXPECT_EQ(*a->functions, 40u);
  EXPECT_EQ(a->max_latency, absl::Milliseconds(250));
  EXPECT_EQ(*a->root, "/tmp/h");
  EXPECT_FALSE(a->json);
  a = ParseGateArgs({"gate", "--max_latency=500ms", "--probe=function_graph"});
  EXPECT_EQ(a->max_latency, absl::Milliseconds(500));
  EXPECT_TRUE(ParseGateArgs({"gate", "--help"})->help);
}

TEST(ParseGateArgsTest, UsageErrors) {
  EXPECT_EQ(Error({"gate", "--max_latency=2s"}),
            "--probe is required (function_graph, function_profiler, "
            "graph_latency, kprobe_multi, kprobe_multi_return, "
            "kprobe_session, fprobe, fprobe_return, kretprobe, fentry)");
  EXPECT_EQ(Error({"gate", "--probe=kprobe"}).substr(0, 31),
            "--probe: unknown kind 'kprobe' ");
  EXPECT_EQ(Error({"gate", "--probe=fentry"}),
            "--max_latency is required (e.g. --max_latency=2s)");
  EXPECT_EQ(Error({"gate", "--probe=fentry", "--max_latency=soon"}),
            "--max_latency: 'soon' is not a duration (2s, 500ms)");
  EXPECT_EQ(Error({"gate", "--probe=fentry", "--max_latency=0s"}),
            "--max_latency: must be positive");
  EXPECT_EQ(Error({"gate", "--probe=fentry", "--max_latency=-1"}),
            "--max_latency: must be positive");
  EXPECT_EQ(Error({"gate", "--probe=fentry", "--functions=0"}),
            "--functions: '0' is not a count of at least 1");
  EXPECT_EQ(Error({"gate", "--probe=fentry", "--functions=many"}),
            "--functions: 'many' is not a count of at least 1");
  EXPECT_EQ(Error({"gate", "--probe=fentry", "--functions=3", "--filter=x*",
                   "--max_latency=1s"}),
            "--functions and --filter: give one of them");
  EXPECT_EQ(Error({"gate", "--filter="}), "--filter: empty pattern");
  EXPECT_EQ(Error({"gate", "--server=h:1"}),
            "unknown flag --server (see --help)");
  EXPECT_EQ(Error({"gate", "extra"}),
            "unexpected argument 'extra' (see --help)");
  EXPECT_EQ(Error({"gate", "--probe"}), "--probe: missing value");
  EXPECT_EQ(Error({"gate", "--json=maybe"}), "--json: 'maybe' is not a bool");
}

}  // namespace
}  // namespace tracehealth
