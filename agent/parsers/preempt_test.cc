#include "agent/parsers/preempt.h"

#include <optional>
#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

TEST(SchedPreemptTest, ReadsActiveMode) {
  EXPECT_EQ(*ParseSchedPreempt("none voluntary (full) lazy\n"),
            v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(*ParseSchedPreempt("(none) voluntary full\n"),
            v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(*ParseSchedPreempt("none voluntary full (lazy)\n"),
            v1::PREEMPT_MODE_LAZY);
}

TEST(SchedPreemptTest, ModeNames) {
  EXPECT_EQ(SchedPreemptMode("none"), v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(SchedPreemptMode("voluntary"), v1::PREEMPT_MODE_VOLUNTARY);
  EXPECT_EQ(SchedPreemptMode("full"), v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(SchedPreemptMode("lazy"), v1::PREEMPT_MODE_LAZY);
  // PREEMPT_RT is a build choice: neither sched/preempt nor preempt= offer it.
  EXPECT_EQ(SchedPreemptMode("rt"), v1::PREEMPT_MODE_UNKNOWN);
  EXPECT_EQ(SchedPreemptMode("Full"), v1::PREEMPT_MODE_UNKNOWN);
  EXPECT_EQ(SchedPreemptMode(""), v1::PREEMPT_MODE_UNKNOWN);
}

TEST(SchedPreemptTest, RejectsMalformed) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "sched/preempt: no active (parenthesised) mode in ''"},
      {"none voluntary full\n",
       "sched/preempt: no active (parenthesised) mode in 'none voluntary "
       "full'"},
      {"(none) (full)\n", "sched/preempt: several active modes"},
      {"none (turbo)\n", "sched/preempt: unknown mode '(turbo)'"},
      {"() none\n", "sched/preempt: unknown mode '()'"},
      {"none (rt)\n", "sched/preempt: unknown mode '(rt)'"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(ParseSchedPreempt(text).status(), message);
  }
}

TEST(VersionFlagsTest, ReadsFlags) {
  auto dyn = ParseVersionPreemptFlags(
      "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)\n");
  ASSERT_TRUE(dyn.ok());
  EXPECT_TRUE(dyn->dynamic);
  EXPECT_FALSE(dyn->preempt);
  EXPECT_FALSE(ModeFromVersionFlags(*dyn).has_value());

  auto rt = ParseVersionPreemptFlags("#1 SMP PREEMPT_RT Thu Jan 1 2026\n");
  EXPECT_EQ(ModeFromVersionFlags(*rt), v1::PREEMPT_MODE_RT);
  auto full = ParseVersionPreemptFlags("#1 SMP PREEMPT Thu Jan 1 2026\n");
  EXPECT_EQ(ModeFromVersionFlags(*full), v1::PREEMPT_MODE_FULL);
  auto none = ParseVersionPreemptFlags("#1 SMP Thu Jan 1 2026\n");
  EXPECT_FALSE(ModeFromVersionFlags(*none).has_value());
  const absl::Status empty = ParseVersionPreemptFlags("  \n").status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.message(), "kernel version string: empty");
}

// Every model the version string can name. PREEMPT_RT is a build choice no
// boot parameter undoes: RT whatever else the string says; PREEMPT_DYNAMIC
// otherwise leaves the mode to sched/preempt or preempt=.
TEST(VersionFlagsTest, EveryModeAndWhichFlagWins) {
  auto mode = [](const char* version) {
    return ModeFromVersionFlags(*ParseVersionPreemptFlags(version));
  };
  EXPECT_EQ(mode("#1 SMP PREEMPT_LAZY Thu Jan 1 2026"), v1::PREEMPT_MODE_LAZY);
  EXPECT_EQ(mode("#1 SMP PREEMPT PREEMPT_LAZY Thu Jan 1 2026"),
            v1::PREEMPT_MODE_LAZY);
  EXPECT_EQ(mode("#1 SMP PREEMPT_DYNAMIC PREEMPT_RT Thu Jan 1 2026"),
            v1::PREEMPT_MODE_RT);
  EXPECT_EQ(mode("#1 SMP PREEMPT_RT PREEMPT_DYNAMIC Thu Jan 1 2026"),
            v1::PREEMPT_MODE_RT);
  EXPECT_EQ(mode("#1 SMP PREEMPT PREEMPT_DYNAMIC Thu Jan 1 2026"),
            std::nullopt);
  EXPECT_EQ(mode("#1 SMP PREEMPT_LAZY PREEMPT_DYNAMIC Thu Jan 1 2026"),
            std::nullopt);
  // Words only: "PREEMPTED" or "XPREEMPT" are not flags.
  EXPECT_EQ(mode("#1 SMP PREEMPTED XPREEMPT Thu Jan 1 2026"), std::nullopt);
}

TEST(ModeFromConfigTest, ChoiceAndDynamicOverride) {
  auto none_dyn = KernelConfig::Parse(
      "CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\n"
      "CONFIG_PREEMPT_DYNAMIC=y\n");
  ASSERT_TRUE(none_dyn.ok());
  EXPECT_EQ(ModeFromConfig(*none_dyn, ""), v1::PREEMPT_MODE_NONE);
  EXPECT_EQ(ModeFromConfig(*none_dyn, "full"), v1::PREEMPT_MODE_FULL);
  EXPECT_EQ(ModeFromConfig(*none_dyn, "bogus"), v1::PREEMPT_MODE_NONE);

  auto none_static = KernelConfig::Parse("CONFIG_PREEMPT_NONE=y\n");
  EXPECT_EQ(ModeFromConfig(*none_static, "full"), v1::PREEMPT_MODE_NONE);
  auto vol = KernelConfig::Parse("CONFIG_PREEMPT_VOLUNTARY=y\n");
  EXPECT_EQ(ModeFromConfig(*vol, ""), v1::PREEMPT_MODE_VOLUNTARY);
  auto rt = KernelConfig::Parse("CONFIG_PREEMPT=y\nCONFIG_PREEMPT_RT=y\n");
  EXPECT_EQ(ModeFromConfig(*rt, ""), v1::PREEMPT_MODE_RT);
  auto lazy = KernelConfig::Parse("CONFIG_PREEMPT_LAZY=y\n");
  EXPECT_EQ(ModeFromConfig(*lazy, ""), v1::PREEMPT_MODE_LAZY);
  auto nothing = KernelConfig::Parse("CONFIG_KASAN=y\n");
  EXPECT_FALSE(ModeFromConfig(*nothing, "").has_value());
}

// 7dadeaa6e851 (7.0): on architectures with PREEMPT_LAZY,
// sched_dynamic_mode() no longer accepts "none" or "voluntary": the boot
// argument is refused and the config's default (lazy or full) stays.
TEST(ModeFromConfigTest, NoneAndVoluntaryRefusedFrom70) {
  auto lazy_dyn = KernelConfig::Parse(
      "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_LAZY=y\n"
      "CONFIG_PREEMPT_DYNAMIC=y\n");
  ASSERT_TRUE(lazy_dyn.ok());
  EXPECT_EQ(ModeFromConfig(*lazy_dyn, "none", true), v1::PREEMPT_MODE_LAZY);
  EXPECT_EQ(ModeFromConfig(*lazy_dyn, "voluntary", true),
            v1::PREEMPT_MODE_LAZY);
  EXPECT_EQ(ModeFromConfig(*lazy_dyn, "full", true), v1::PREEMPT_MODE_FULL);
  // Before 7.0 (or on other architectures) the boot argument counts.
  EXPECT_EQ(ModeFromConfig(*lazy_dyn, "none", false), v1::PREEMPT_MODE_NONE);
}

}  // namespace
}  // namespace tracehealth::agent
