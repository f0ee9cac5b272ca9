#include "common/enum_names.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(EnumNamesTest, Risk) {
  EXPECT_STREQ(RiskName(v1::RISK_UNKNOWN), "unknown");
  EXPECT_STREQ(RiskName(v1::RISK_NONE), "none");
  EXPECT_STREQ(RiskName(v1::RISK_LATENCY), "latency");
  EXPECT_STREQ(RiskName(v1::RISK_WARNING), "warning");
  EXPECT_STREQ(RiskName(v1::RISK_STALL), "stall");
  EXPECT_STREQ(RiskName(static_cast<v1::Risk>(99)), "unknown");
}

TEST(EnumNamesTest, PreemptModeBothSpellingsAndBack) {
  struct Case {
    v1::PreemptMode mode;
    const char* name;
    const char* config;
  };
  const Case cases[] = {
      {v1::PREEMPT_MODE_NONE, "none", "PREEMPT_NONE"},
      {v1::PREEMPT_MODE_VOLUNTARY, "voluntary", "PREEMPT_VOLUNTARY"},
      {v1::PREEMPT_MODE_FULL, "full", "PREEMPT"},
      {v1::PREEMPT_MODE_LAZY, "lazy", "PREEMPT_LAZY"},
      {v1::PREEMPT_MODE_RT, "rt", "PREEMPT_RT"},
  };
  for (const Case& c : cases) {
    EXPECT_STREQ(PreemptModeName(c.mode), c.name);
    EXPECT_STREQ(PreemptModeConfigName(c.mode), c.config);
    EXPECT_EQ(PreemptModeFromName(c.name), c.mode) << c.name;
  }
  EXPECT_STREQ(PreemptModeName(v1::PREEMPT_MODE_UNKNOWN), "unknown");
  EXPECT_STREQ(PreemptModeConfigName(v1::PREEMPT_MODE_UNKNOWN),
               "preemption unknown");
  // Only the exact lower-case names parse; "unknown" names no mode.
  EXPECT_EQ(PreemptModeFromName("unknown"), std::nullopt);
  EXPECT_EQ(PreemptModeFromName("None"), std::nullopt);
  EXPECT_EQ(PreemptModeFromName("PREEMPT_NONE"), std::nullopt);
  EXPECT_EQ(PreemptModeFromName(""), std::nullopt);
}

TEST(EnumNamesTest, CheckKindNounAndAdjective) {
  EXPECT_STREQ(CheckKindName(v1::ThresholdCheck::KIND_SOFT_LOCKUP),
               "soft lockup");
  EXPECT_STREQ(CheckKindName(v1::ThresholdCheck::KIND_RCU_STALL), "RCU stall");
  EXPECT_STREQ(CheckKindName(v1::ThresholdCheck::KIND_LATENCY),
               "latency budget");
  EXPECT_STREQ(CheckKindName(v1::ThresholdCheck::KIND_POOL_BUDGET),
               "pool budget");
  EXPECT_STREQ(CheckKindName(v1::ThresholdCheck::KIND_UNSPECIFIED),
               "unspecified");
  EXPECT_STREQ(CheckKindAdjective(v1::ThresholdCheck::KIND_SOFT_LOCKUP),
               "soft-lockup");
  EXPECT_STREQ(CheckKindAdjective(v1::ThresholdCheck::KIND_RCU_STALL),
               "RCU-stall");
  EXPECT_STREQ(CheckKindAdjective(v1::ThresholdCheck::KIND_LATENCY),
               "latency-budget");
  EXPECT_STREQ(CheckKindAdjective(v1::ThresholdCheck::KIND_POOL_BUDGET),
               "pool-budget");
  EXPECT_STREQ(CheckKindName(v1::ThresholdCheck::KIND_HUNG_TASK), "hung task");
  EXPECT_STREQ(CheckKindAdjective(v1::ThresholdCheck::KIND_HUNG_TASK),
               "hung-task");
  EXPECT_STREQ(CheckKindAdjective(v1::ThresholdCheck::KIND_UNSPECIFIED),
               "threshold");
}

TEST(EnumNamesTest, HungTaskRisk) {
  EXPECT_STREQ(HungTaskRiskName(v1::HUNG_TASK_RISK_UNKNOWN), "unknown");
  EXPECT_STREQ(HungTaskRiskName(v1::HUNG_TASK_RISK_OFF), "off");
  EXPECT_STREQ(HungTaskRiskName(v1::HUNG_TASK_RISK_NONE), "none");
  EXPECT_STREQ(HungTaskRiskName(v1::HUNG_TASK_RISK_REPORTED), "reported");
  EXPECT_STREQ(HungTaskRiskName(v1::HUNG_TASK_RISK_PANIC), "panic");
  EXPECT_STREQ(HungTaskRiskName(v1::HUNG_TASK_RISK_UNSPECIFIED), "unspecified");
}

TEST(EnumNamesTest, CpuClass) {
  EXPECT_STREQ(CpuClassName(v1::CPU_CLASS_FITTED), "the fitted class");
  EXPECT_STREQ(CpuClassName(v1::CPU_CLASS_OTHER), "another CPU");
  EXPECT_STREQ(CpuClassName(v1::CPU_CLASS_VIRTUALIZED), "a guest");
  EXPECT_STREQ(CpuClassName(v1::CPU_CLASS_EMULATED), "an emulated CPU");
  EXPECT_STREQ(CpuClassName(v1::CPU_CLASS_UNKNOWN), "an unknown CPU");
  EXPECT_STREQ(CpuClassName(v1::CPU_CLASS_UNSPECIFIED), "an unknown CPU");
}

TEST(EnumNamesTest, InputSource) {
  EXPECT_STREQ(InputSourceName(v1::INPUT_SOURCE_MEASURED), "measured");
  EXPECT_STREQ(InputSourceName(v1::INPUT_SOURCE_DERIVED), "derived");
  EXPECT_STREQ(InputSourceName(v1::INPUT_SOURCE_DEFAULT), "default");
  EXPECT_STREQ(InputSourceName(v1::INPUT_SOURCE_OVERRIDDEN), "given");
  EXPECT_STREQ(InputSourceName(v1::INPUT_SOURCE_NOT_APPLICABLE),
               "not applicable");
  EXPECT_STREQ(InputSourceName(v1::INPUT_SOURCE_UNSPECIFIED), "?");
}

TEST(EnumNamesTest, FgraphUsers) {
  using U = v1::FgraphUser;
  EXPECT_STREQ(FgraphUserName(U::KIND_FUNCTION_GRAPH_TRACER),
               "function_graph tracer");
  EXPECT_STREQ(FgraphUserName(U::KIND_FUNCTION_PROFILER), "function profiler");
  EXPECT_STREQ(FgraphUserName(U::KIND_GRAPH_LATENCY_TRACER),
               "latency tracer with display-graph");
  EXPECT_STREQ(FgraphUserName(U::KIND_FPROBE_EVENT), "fprobe event");
  EXPECT_STREQ(FgraphUserName(U::KIND_FPROBE_RETURN_EVENT),
               "fprobe %return event");
  EXPECT_STREQ(FgraphUserName(U::KIND_BPF_KPROBE_MULTI),
               "BPF kprobe_multi link");
  EXPECT_STREQ(FgraphUserName(U::KIND_BPF_KPROBE_MULTI_RETURN),
               "BPF kprobe_multi return link");
  EXPECT_STREQ(FgraphUserName(static_cast<U::Kind>(0)), "unknown user");
}

TEST(EnumNamesTest, EveryProbeKindHasAFlagANameAndALabel) {
  struct Case {
    v1::ProbeKind kind;
    const char* flag;
    const char* name;
    const char* label;
  };
  const Case cases[] = {
      {v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, "function_graph",
       "function_graph tracer", "function_graph tracer"},
      {v1::PROBE_KIND_FUNCTION_PROFILER, "function_profiler",
       "function profiler", "function profiler"},
      {v1::PROBE_KIND_GRAPH_LATENCY_TRACER, "graph_latency",
       "graph latency tracer", "irqsoff/wakeup + display-graph"},
      {v1::PROBE_KIND_KPROBE_MULTI, "kprobe_multi", "kprobe_multi",
       "BPF kprobe_multi (entry)"},
      {v1::PROBE_KIND_KPROBE_MULTI_RETURN, "kprobe_multi_return",
       "kprobe_multi return", "BPF kprobe_multi (return)"},
      {v1::PROBE_KIND_KPROBE_SESSION, "kprobe_session", "kprobe session",
       "BPF kprobe session"},
      {v1::PROBE_KIND_FPROBE_EVENT, "fprobe", "fprobe event", "fprobe event"},
      {v1::PROBE_KIND_FPROBE_RETURN_EVENT, "fprobe_return",
       "fprobe %return event", "fprobe event %return"},
      {v1::PROBE_KIND_KRETPROBE, "kretprobe", "kretprobe", "kretprobe"},
      {v1::PROBE_KIND_FENTRY_FEXIT, "fentry", "fentry/fexit",
       "BPF fentry/fexit"},
  };
  std::vector<std::string> flags;
  for (const Case& c : cases) {
    EXPECT_STREQ(ProbeKindFlag(c.kind), c.flag);
    EXPECT_STREQ(ProbeKindName(c.kind), c.name);
    EXPECT_STREQ(ProbeKindLabel(c.kind), c.label);
    EXPECT_EQ(ProbeKindFromFlag(c.flag), c.kind) << c.flag;
    flags.push_back(c.flag);
  }
  EXPECT_EQ(ProbeKindFlags(), flags);
  EXPECT_STREQ(ProbeKindName(v1::PROBE_KIND_UNSPECIFIED), "unspecified probe");
  EXPECT_STREQ(ProbeKindLabel(v1::PROBE_KIND_UNSPECIFIED), "?");
  EXPECT_STREQ(ProbeKindFlag(v1::PROBE_KIND_UNSPECIFIED), "");
  EXPECT_EQ(ProbeKindFromFlag(""), std::nullopt);
  EXPECT_EQ(ProbeKindFromFlag("fentry_fexit"), std::nullopt);
  EXPECT_EQ(ProbeKindFromFlag("KPROBE_MULTI"), std::nullopt);
}

}  // namespace
}  // namespace tracehealth
