#include "agent/calibrate/calibrator.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "agent/calibrate/journal.h"
#include "common/models/fgraph/calibration_math.h"
#include "common/procfs/host_fs.h"
#include "gtest/gtest.h"
#include "tests/agent/fixture_util.h"

namespace tracehealth::agent {
namespace {

using ::tracehealth::testing::CopyFixture;
using ::tracehealth::testing::NewTempDir;

constexpr char kTracing[] = "/sys/kernel/tracing";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Put(const std::string& path, const std::string& content) {
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// A 6.1 PREEMPT_DYNAMIC (voluntary) host cut down to 400 threads, never
// seen with fgraph active (all 400 without a shadow stack), ksys_sync
// traceable and a filter of two functions in place.
class CalibratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = CopyFixture("preempt-voluntary-dynamic-6.1-128k");
    state_ = NewTempDir("state");
    Put(root_ + "/proc/loadavg", "12.31 11.87 11.02 3/400 412328\n");
    const std::string fns =
        Slurp(Tracing("available_filter_functions")) + "ksys_sync\n";
    Put(Tracing("available_filter_functions"), fns);
    Put(Tracing("set_ftrace_filter"), "vfs_read\nvfs_write\n");
    Put(Tracing("current_tracer"), "nop\n");
  }
  std::string Tracing(const std::string& file) const {
    return root_ + kTracing + "/" + file;
  }
  CalibratorOptions Options() const {
    CalibratorOptions o;
    o.state_dir = state_;
    o.host_id = "canary-1";
    o.threads = 64;
    o.repeats = 1;
    return o;
  }
  // Runs with a monotonic clock that returns `ticks` (ns) in turn.
  CalibrationOutcome Run(const CalibratorOptions& o,
                         std::vector<int64_t> ticks = {0, 0, 0, 0}) {
    HostFs fs(root_);
    size_t next = 0;
    auto mono = [ticks, next]() mutable {
      return next < ticks.size() ? ticks[next++] : ticks.back();
    };
    Calibrator c(
        &fs, o, mono, [] { return absl::FromUnixSeconds(1764603600); }, &stop_);
    return c.Run();
  }
  // The tracer and filter as the test put them, and no journal.
  void ExpectUntouched() {
    EXPECT_EQ(Slurp(Tracing("current_tracer")), "nop\n");
    EXPECT_EQ(Slurp(Tracing("set_ftrace_filter")), "vfs_read\nvfs_write\n");
    EXPECT_FALSE(std::filesystem::exists(JournalPath(state_)));
  }

  std::string root_, state_;
  absl::Notification stop_;
};

TEST_F(CalibratorTest, MeasuresRestoresAndDerives) {
  // The warm-up gave the 400 threads their stacks: N_total = 400 + 64 =
  // 464, the 64 fresh ones at the tail, B = 32 (6.1): F = 2 passes, k = 1:
  // V1 = 1 * (464 - 64 + 1) + 32 * 1 * 2 / 2 + 464 = 897.
  // first = 400 us, second = 300 us:
  //   c_visit = (400 - 300 - 2 * 1 - 0.02 * 64) / (897 - 464)
  //           = 96.72 / 433 us = 223.372 ns
  //   fixed   = 300 - 0.223372 * 464 - 2 = 194.356 us
  CalibrationOutcome o =
      Run(Options(), {5'000'000, 5'400'000, 9'000'000, 9'300'000});
  ASSERT_EQ(o.kind, CalibrationOutcome::kCalibrated) << o.reason;
  const v1::Calibration& c = o.calibration;
  EXPECT_EQ(c.threads(), 64u);
  EXPECT_EQ(c.total_threads(), 464u);
  EXPECT_EQ(c.fresh_threads(), 64u);
  EXPECT_EQ(c.batch(), 32u);
  EXPECT_EQ(c.first_passes(), 2u);
  EXPECT_DOUBLE_EQ(c.first_visits(), 897);
  // K = 64: K/2 = 32 would not exceed the batch: one point, one round.
  EXPECT_EQ(c.points_size(), 1);
  EXPECT_EQ(c.repetitions(), 1u);
  EXPECT_FALSE(c.c_pass_fitted());
  EXPECT_NEAR(c.first_enable_seconds(), 400e-6, 1e-12);
  EXPECT_NEAR(c.second_enable_seconds(), 300e-6, 1e-12);
  EXPECT_NEAR(c.c_visit_seconds(), 96.72e-6 / 433, 1e-15);
  EXPECT_NEAR(c.fixed_seconds(), 300e-6 - 96.72e-6 / 433 * 464 - 2e-6, 1e-12);
  EXPECT_EQ(c.filter_function(), "ksys_sync");
  EXPECT_EQ(c.host_id(), "canary-1");
  EXPECT_EQ(c.kernel_release(), "6.1.0-28-amd64");
  EXPECT_EQ(c.hardware_class(), "QEMU TCG CPU version 2.5+ / 6.1");
  EXPECT_EQ(c.predicted_basis(), "seed default");
  EXPECT_EQ(c.measured_at().seconds(), 1764603600);
  // What it wrote is undone: the fixture's files hold the last writes.
  ExpectUntouched();
}

TEST_F(CalibratorTest, RefusesWhenTheTracerIsInUse) {
  Put(Tracing("current_tracer"), "function_graph\n");
  CalibrationOutcome o = Run(Options());
  EXPECT_EQ(o.kind, CalibrationOutcome::kRefused);
  EXPECT_EQ(o.reason,
            "fgraph in use: current_tracer is function_graph, not nop");
  EXPECT_EQ(Slurp(Tracing("current_tracer")), "function_graph\n");
  EXPECT_FALSE(std::filesystem::exists(JournalPath(state_)));
}

TEST_F(CalibratorTest, RefusesAnotherFgraphUser) {
  Put(Tracing("function_profile_enabled"), "1\n");
  CalibrationOutcome o = Run(Options());
  EXPECT_EQ(o.kind, CalibrationOutcome::kRefused);
  EXPECT_TRUE(absl::StartsWith(o.reason, "fgraph in use: ")) << o.reason;
  EXPECT_NE(o.reason.find("profiler"), std::string::npos) << o.reason;
  ExpectUntouched();
}

TEST_F(CalibratorTest, RefusesAReadOnlyTracefs) {
  std::string mounts = Slurp(root_ + "/proc/mounts");
  const std::string rw = "tracefs /sys/kernel/tracing tracefs rw,";
  ASSERT_NE(mounts.find(rw), std::string::npos);
  mounts.replace(mounts.find(rw), rw.size(),
                 "tracefs /sys/kernel/tracing tracefs ro,");
  Put(root_ + "/proc/mounts", mounts);
  CalibrationOutcome o = Run(Options());
  EXPECT_EQ(o.kind, CalibrationOutcome::kRefused);
  EXPECT_EQ(o.reason,
            "tracefs not writable: /sys/kernel/tracing is mounted read-only");
  ExpectUntouched();
}

TEST_F(CalibratorTest, RefusesAMissingControlFile) {
  std::filesystem::remove(Tracing("set_ftrace_filter"));
  CalibrationOutcome o = Run(Options());
  EXPECT_EQ(o.kind, CalibrationOutcome::kRefused);
  EXPECT_TRUE(absl::StartsWith(o.reason,
                               "tracefs not writable: "
                               "/sys/kernel/tracing/"
                               "set_ftrace_filter"))
      << o.reason;
}

TEST_F(CalibratorTest, RefusesWithoutTracefs) {
  std::string mounts = Slurp(root_ + "/proc/mounts");
  mounts.erase(mounts.find("tracefs /sys/kernel/tracing"));
  Put(root_ + "/proc/mounts", mounts);
  std::filesystem::remove_all(root_ + "/sys/kernel/tracing");
  std::filesystem::remove_all(root_ + "/sys/kernel/debug/tracing");
  CalibrationOutcome o = Run(Options());
  EXPECT_EQ(o.kind, CalibrationOutcome::kRefused);
  EXPECT_EQ(o.reason, "tracefs is not mounted");
}

TEST_F(CalibratorTest, RefusesWithoutARareFunction) {
  Put(Tracing("available_filter_functions"), "vfs_read\nvfs_write\n");
  CalibrationOutcome o = Run(Options());
  EXPECT_EQ(o.kind, CalibrationOutcome::kRefused);
  EXPECT_TRUE(
      absl::StartsWith(o.reason, "no rarely called function (ksys_sync"))
      << o.reason;
  ExpectUntouched();
}

TEST_F(CalibratorTest, BudgetBoundaryForAGivenThreadCount) {
  // Seed c_visit of a CONFIG_PREEMPTION build (PREEMPT_DYNAMIC): 88.7 ns.
  // The budget prices the bound: 464 threads all fresh (the 400 the bound
  // allows and the 64 started), F = 15, k = 14: V = 14 * 1 + 32 * 14 * 15
  // / 2 + 464 = 3838; 88.7 ns * 3838 + 2 us * 15 + 20 ns * 464
  //   = 340.4306 + 30 + 9.28 = 379.7106 us.
  CalibratorOptions o = Options();
  o.budget_seconds = 379.70e-6;
  CalibrationOutcome refused = Run(o);
  EXPECT_EQ(refused.kind, CalibrationOutcome::kRefused);
  EXPECT_EQ(refused.reason,
            "prediction over the budget: the walk at 464 threads (464 without "
            "a shadow stack, c_visit 88.7 ns, seed default) is predicted at "
            "0.000379711 s, over --calibrate_budget 0.0003797 s");
  ExpectUntouched();
  o.budget_seconds = 379.72e-6;
  CalibrationOutcome ok = Run(o, {0, 400'000, 1'000'000, 1'300'000});
  EXPECT_EQ(ok.kind, CalibrationOutcome::kCalibrated) << ok.reason;
  EXPECT_NEAR(ok.calibration.predicted_seconds(), 379.7106e-6, 1e-12);
}

TEST_F(CalibratorTest, ChoosesTheThreadCountUnderTheBudget) {
  // With a 379.72 us budget K = 64 fits (above) and K = 65 does not: 465
  // threads: F = 15, k = 14: V = 14 + 3360 + 465 = 3839:
  // 340.5193 + 30 + 9.3 = 379.8193 us.
  CalibratorOptions o = Options();
  o.threads = 0;
  o.budget_seconds = 379.72e-6;
  CalibrationOutcome ok = Run(o, {0, 400'000, 1'000'000, 1'300'000});
  ASSERT_EQ(ok.kind, CalibrationOutcome::kCalibrated) << ok.reason;
  EXPECT_EQ(ok.calibration.threads(), 64u);
}

// After the warm-up only the K threads lack a stack: K <= B (32 on 6.1)
// would be one pass, no walk to measure. 32 is refused, 33 measured.
TEST_F(CalibratorTest, RefusesNoMoreThreadsThanTheBatch) {
  CalibratorOptions o = Options();
  o.threads = 32;
  CalibrationOutcome refused = Run(o);
  EXPECT_EQ(refused.kind, CalibrationOutcome::kRefused);
  EXPECT_EQ(refused.reason,
            "32 threads are not more than the batch (32): the first enable "
            "would walk the task list once and measure no walk");
  ExpectUntouched();
  o.threads = 33;
  // 433 threads, 33 fresh: F = 2, k = 1: V1 = 401 + 32 + 433 = 866.
  CalibrationOutcome ok = Run(o, {0, 400'000, 1'000'000, 1'300'000});
  ASSERT_EQ(ok.kind, CalibrationOutcome::kCalibrated) << ok.reason;
  EXPECT_EQ(ok.calibration.fresh_threads(), 33u);
  EXPECT_DOUBLE_EQ(ok.calibration.first_visits(), 866);
}

// The NULL-thread bound is an upper bound: an fgraph user the agent never
// saw leaves threads holding stacks it counts as without. The fixture's
// bound says all 400 lack one ("never seen active since boot"). After the
// warm-up the timed enable walks the same 64 fresh threads whether the 400
// held stacks or not, so a kernel at c_visit 88.7 ns with a 50 us fixed
// cost times, on either host:
//   first  = 50 + 0.0887 * 897 + 2 * 2 + 0.02 * 64 = 134.8439 us
//   second = 50 + 0.0887 * 464 + 2 = 93.1568 us
// and the calibration gives back 88.7 ns and 50 us. Taking the bound as
// exact (464 fresh: V1 = 3838, P1 = 15) would give
// (134.8439 - 93.1568 - 2 * 14 - 0.02 * 464) / (3838 - 464) = 1.30 ns,
// 68x low.
TEST_F(CalibratorTest, CVisitDoesNotDependOnTheNullThreadBound) {
  ASSERT_EQ(Slurp(root_ + "/proc/loadavg"), "12.31 11.87 11.02 3/400 412328\n");
  CalibrationOutcome o = Run(Options(), {0, 134'844, 1'000'000, 1'093'157});
  ASSERT_EQ(o.kind, CalibrationOutcome::kCalibrated) << o.reason;
  const v1::Calibration& c = o.calibration;
  EXPECT_EQ(c.fresh_threads(), 64u);
  EXPECT_DOUBLE_EQ(c.first_visits(), 897);
  EXPECT_NEAR(c.c_visit_seconds() / 88.7e-9, 1.0, 0.01);
  EXPECT_NEAR(c.fixed_seconds() / 50e-6, 1.0, 0.01);
  absl::StatusOr<DerivedConstants> as_if_exact = FitCalibration(
      {{464, 464, c.first_enable_seconds(), c.second_enable_seconds()}}, 32,
      WalkConstants{88.7e-9, 2e-6, 20e-9});
  ASSERT_TRUE(as_if_exact.ok()) << as_if_exact.status();
  EXPECT_LT(as_if_exact->c_visit_seconds, 0.1 * 88.7e-9);
}

// K = 192 at three points, K_j = 64, 128, 192, two rounds. A kernel at
// c_visit 100 ns, 50 us a pass (an emulator's), c_alloc 20 ns and a fixed
// 50 us, with the fixture's 400 threads warmed up and K_j fresh at the tail:
//   K 64:  N 464, F 2, k 1: V1 = 401 + 32 + 464 = 897, P1 2
//          first = 50 + 89.7 + 100 + 1.28 = 240.98, second = 50 + 46.4 +
//          50 = 146.4 us
//   K 128: N 528, F 4, k 3: V1 = 1203 + 192 + 528 = 1923, P1 4
//          first = 50 + 192.3 + 200 + 2.56 = 444.86, second = 152.8 us
//   K 192: N 592, F 6, k 5: V1 = 2005 + 480 + 592 = 3077, P1 6
//          first = 50 + 307.7 + 300 + 3.84 = 661.54, second = 159.2 us
// Round 1's 128-thread first enable and round 2's 64- and 192-thread
// second enables are disturbed (+300 us, +80 us): the shortest of each is
// the undisturbed one, and the fit gives back 100 ns, 50 us a pass and
// 50 us fixed. One point with the assumed 2 us a pass (the 192 one alone)
// would give (661.54 - 159.2 - 3.84 - 2 * 5) / (3077 - 592) = 196.6 ns.
TEST_F(CalibratorTest, FitsVisitAndPassOverThePointsShortestOfTheRounds) {
  CalibratorOptions o = Options();
  o.threads = 192;
  o.repeats = 2;
  std::vector<int64_t> ticks;
  int64_t now = 0;
  auto timed = [&](double us) {
    now += 1'000'000;
    ticks.push_back(now);
    ticks.push_back(now + static_cast<int64_t>(us * 1000 + 0.5));
  };
  // Round 1.
  timed(240.98), timed(146.4);
  timed(444.86 + 300), timed(152.8);
  timed(661.54), timed(159.2);
  // Round 2.
  timed(240.98), timed(146.4 + 80);
  timed(444.86), timed(152.8);
  timed(661.54), timed(159.2 + 80);
  CalibrationOutcome out = Run(o, ticks);
  ASSERT_EQ(out.kind, CalibrationOutcome::kCalibrated) << out.reason;
  const v1::Calibration& c = out.calibration;
  EXPECT_EQ(c.repetitions(), 2u);
  ASSERT_EQ(c.points_size(), 3);
  const uint64_t threads[] = {64, 128, 192};
  const double first[] = {240.98, 444.86, 661.54};
  const double second[] = {146.4, 152.8, 159.2};
  const double visits[] = {897, 1923, 3077};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(c.points(i).threads(), threads[i]);
    EXPECT_EQ(c.points(i).total_threads(), 400 + threads[i]);
    EXPECT_EQ(c.points(i).fresh_threads(), threads[i]);
    EXPECT_NEAR(c.points(i).first_enable_seconds(), first[i] * 1e-6, 1e-12);
    EXPECT_NEAR(c.points(i).second_enable_seconds(), second[i] * 1e-6, 1e-12);
    EXPECT_DOUBLE_EQ(c.points(i).first_visits(), visits[i]);
  }
  // The top level is the largest point.
  EXPECT_EQ(c.threads(), 192u);
  EXPECT_EQ(c.total_threads(), 592u);
  EXPECT_DOUBLE_EQ(c.first_visits(), 3077);
  EXPECT_EQ(c.first_passes(), 6u);
  EXPECT_TRUE(c.c_pass_fitted());
  EXPECT_NEAR(c.c_visit_seconds(), 100e-9, 1e-13);
  EXPECT_NEAR(c.c_pass_seconds(), 50e-6, 1e-10);
  EXPECT_NEAR(c.fixed_seconds(), 50e-6, 1e-10);
  absl::StatusOr<DerivedConstants> largest_alone =
      FitCalibration({{592, 192, 661.54e-6, 159.2e-6}}, 32,
                     WalkConstants{88.7e-9, 2e-6, 20e-9});
  ASSERT_TRUE(largest_alone.ok()) << largest_alone.status();
  EXPECT_NEAR(largest_alone->c_visit_seconds, 488.5e-6 / 2485, 1e-14);
  ExpectUntouched();
}

// K = 96: a third point (32 threads) would not exceed the batch (32 on
// 6.1), so two: 48 and 96. K = 99: ceil(99 / 3) = 33, three: 33, 66, 99.
TEST_F(CalibratorTest, FewerPointsWhenASmallerOneWouldNotWalk) {
  CalibratorOptions o = Options();
  o.threads = 96;
  CalibrationOutcome two = Run(o, {0, 400'000, 1'000'000, 1'100'000, 2'000'000,
                                   2'800'000, 3'000'000, 3'100'000});
  ASSERT_EQ(two.kind, CalibrationOutcome::kCalibrated) << two.reason;
  ASSERT_EQ(two.calibration.points_size(), 2);
  EXPECT_EQ(two.calibration.points(0).threads(), 48u);
  EXPECT_EQ(two.calibration.points(1).threads(), 96u);
  o.threads = 99;
  CalibrationOutcome three =
      Run(o, {0, 400'000, 1'000'000, 1'100'000, 2'000'000, 2'800'000, 3'000'000,
              3'100'000, 4'000'000, 5'200'000, 6'000'000, 6'100'000});
  ASSERT_EQ(three.kind, CalibrationOutcome::kCalibrated) << three.reason;
  ASSERT_EQ(three.calibration.points_size(), 3);
  EXPECT_EQ(three.calibration.points(0).threads(), 33u);
  EXPECT_EQ(three.calibration.points(1).threads(), 66u);
  EXPECT_EQ(three.calibration.points(2).threads(), 99u);
}

TEST_F(CalibratorTest, RefusesWhenEvenOneThreadIsOverTheBudget) {
  // The full fixture: 128,000 threads, none with a shadow stack.
  Put(root_ + "/proc/loadavg", "12.31 11.87 11.02 3/128000 412328\n");
  CalibratorOptions o = Options();
  o.threads = 0;
  CalibrationOutcome refused = Run(o);
  EXPECT_EQ(refused.kind, CalibrationOutcome::kRefused);
  EXPECT_TRUE(absl::StartsWith(refused.reason,
                               "prediction over the budget: the walk at "
                               "128001 threads (128001 without"))
      << refused.reason;
  ExpectUntouched();
}

TEST_F(CalibratorTest, PredictsWithTheStoredCalibration) {
  // With c_visit 10 ns and a fixed 50 us: 10 ns * 3838 + 30 + 9.28 + 50
  //   = 38.38 + 89.28 = 127.66 us, inside a 130 us budget the seed value
  // (379.7 us) is not.
  CalibratorOptions o = Options();
  o.budget_seconds = 130e-6;
  o.models.calibration =
      CalibratedConstants{10e-9, 50e-6, "this host's calibration X"};
  CalibrationOutcome ok = Run(o, {0, 400'000, 1'000'000, 1'300'000});
  ASSERT_EQ(ok.kind, CalibrationOutcome::kCalibrated) << ok.reason;
  EXPECT_NEAR(ok.calibration.predicted_seconds(), 127.66e-6, 1e-12);
  EXPECT_EQ(ok.calibration.predicted_basis(), "this host's calibration X");
}

TEST_F(CalibratorTest, AFirstEnableNoSlowerIsAnErrorAfterTheRestore) {
  CalibrationOutcome o = Run(Options(), {0, 100'000, 200'000, 400'000});
  EXPECT_EQ(o.kind, CalibrationOutcome::kError);
  EXPECT_NE(o.reason.find("was not slower than the second"), std::string::npos)
      << o.reason;
  ExpectUntouched();
}

TEST_F(CalibratorTest, ASignalDuringTheMeasurementRestores) {
  CalibratorOptions o = Options();
  o.hold_for_test = absl::Seconds(60);
  // Stop once the first enable is in place (held there).
  std::thread signal([&] {
    while (Slurp(Tracing("current_tracer")) != "function_graph\n") {
      absl::SleepFor(absl::Milliseconds(5));
    }
    EXPECT_EQ(Slurp(Tracing("set_ftrace_filter")), "ksys_sync\n");
    EXPECT_TRUE(std::filesystem::exists(JournalPath(state_)));
    stop_.Notify();
  });
  CalibrationOutcome out = Run(o);
  signal.join();
  EXPECT_EQ(out.kind, CalibrationOutcome::kError);
  EXPECT_EQ(out.reason, "interrupted by a signal");
  ExpectUntouched();
}

TEST_F(CalibratorTest, RefusesWhileAnotherCalibrationRuns) {
  absl::StatusOr<std::unique_ptr<CalibrationLock>> held =
      CalibrationLock::TryAcquire(state_);
  ASSERT_TRUE(held.ok()) << held.status();
  CalibrationOutcome o = Run(Options());
  EXPECT_EQ(o.kind, CalibrationOutcome::kRefused);
  EXPECT_TRUE(absl::StartsWith(o.reason, "another calibration holds "))
      << o.reason;
  ExpectUntouched();
}

}  // namespace
}  // namespace tracehealth::agent
