#include "agent/calibrate/calibrator.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/calibrate/idle_threads.h"
#include "agent/calibrate/journal.h"
#include "agent/calibrate/tracefs_write.h"
#include "agent/collect/collector.h"
#include "agent/collect/thread_counts.h"
#include "common/enum_names.h"
#include "common/models/calibrated_constants.h"
#include "common/models/fgraph/calibration_math.h"
#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/fgraph/hardware_class.h"
#include "common/models/kernel_features.h"
#include "common/proto_time.h"
#include "common/status.h"

namespace tracehealth::agent {
namespace {

// Functions hardly any workload calls (sync(2) and its helper), in order of
// preference: the filter patches one of them, so the enable's patching
// cost is one site and the tracer records next to nothing.
constexpr const char* kRareFunctions[] = {
    "ksys_sync",     "__x64_sys_sync", "__arm64_sys_sync", "__ia32_sys_sync",
    "__do_sys_sync", "sys_sync",       "__x64_sys_syncfs", "__arm64_sys_syncfs",
};
constexpr size_t kSmallFile = 64 << 10;
constexpr size_t kFilterMax = 16 << 20;
constexpr uint64_t kFunctionListMax = 64 << 20;

CalibrationOutcome Refused(std::string reason) {
  CalibrationOutcome o;
  o.kind = CalibrationOutcome::kRefused;
  o.reason = std::move(reason);
  return o;
}

CalibrationOutcome Failed(std::string reason) {
  CalibrationOutcome o;
  o.kind = CalibrationOutcome::kError;
  o.reason = std::move(reason);
  return o;
}

// The first of kRareFunctions listed in available_filter_functions
// ("name" or "name [module]" per line); "" when none is.
std::string FindRareFunction(const HostFs& fs, const std::string& tracefs,
                             std::string* error) {
  size_t best = std::size(kRareFunctions);
  absl::StatusOr<uint64_t> lines = fs.ReadLines(
      tracefs + "/available_filter_functions", kFunctionListMax,
      [&](absl::string_view line) {
        const absl::string_view name = line.substr(0, line.find(' '));
        for (size_t i = 0; i < best; ++i) {
          if (name == kRareFunctions[i]) best = i;
        }
      });
  if (!lines.ok()) {
    *error = std::string(lines.status().message());
    return "";
  }
  return best < std::size(kRareFunctions) ? kRareFunctions[best] : "";
}

std::string UsersText(const v1::FgraphState& fg) {
  std::vector<std::string> users;
  for (const v1::FgraphUser& u : fg.users()) {
    users.push_back(u.where().empty() ? std::string(FgraphUserName(u.kind()))
                                      : absl::StrCat(FgraphUserName(u.kind()),
                                                     " (", u.where(), ")"));
  }
  return absl::StrJoin(users, ", ");
}

std::string UnknownText(const v1::HostSnapshot& s, absl::string_view prefix) {
  std::vector<std::string> out;
  for (const v1::UnknownInput& u : s.unknown()) {
    if (absl::StartsWith(u.input(), prefix))
      out.push_back(absl::StrCat(u.input(), ": ", u.reason()));
  }
  return out.empty() ? "not read" : absl::StrJoin(out, "; ");
}

}  // namespace

struct Calibrator::Plan {
  std::string tracefs;
  std::string filter_function;
  std::string previous_tracer;
  std::string previous_filter;
  CalibrationHost host;
  uint64_t k = 0;
  // K_1 < ... < K_P = K.
  std::vector<uint64_t> point_threads;
  WalkConstants c;
  double fixed_seconds = 0;
  std::string basis;
  CalibrationWalk predicted;
};

Calibrator::Calibrator(const HostFs* fs, CalibratorOptions options,
                       std::function<int64_t()> monotonic_ns,
                       std::function<absl::Time()> clock,
                       absl::Notification* stop)
    : fs_(fs),
      options_(std::move(options)),
      monotonic_ns_(std::move(monotonic_ns)),
      clock_(std::move(clock)),
      stop_(stop) {}

bool Calibrator::Prepare(const v1::HostSnapshot& snapshot, Plan* plan,
                         CalibrationOutcome* outcome) {
  const v1::FgraphState& fg = snapshot.fgraph();
  if (!fg.has_tracefs_path()) {
    *outcome = Refused("tracefs is not mounted");
    return false;
  }
  plan->tracefs = fg.tracefs_path();
  const std::string tracer_path = plan->tracefs + "/current_tracer";
  const std::string filter_path = plan->tracefs + "/set_ftrace_filter";
  absl::StatusOr<std::string> tracer = fs_->ReadFile(tracer_path, kSmallFile);
  if (!tracer.ok()) {
    *outcome = Refused(
        absl::StrCat("tracefs not readable: ", tracer.status().message()));
    return false;
  }
  plan->previous_tracer = std::string(absl::StripAsciiWhitespace(*tracer));
  if (plan->previous_tracer != "nop") {
    *outcome = Refused(absl::StrCat("fgraph in use: current_tracer is ",
                                    plan->previous_tracer, ", not nop"));
    return false;
  }
  if (fg.users_size() > 0) {
    *outcome = Refused(absl::StrCat("fgraph in use: ", UsersText(fg)));
    return false;
  }
  if (!fg.has_active()) {
    *outcome = Refused(absl::StrCat("fgraph use not known: ",
                                    UnknownText(snapshot, "fgraph.")));
    return false;
  }
  absl::StatusOr<std::string> mounts = fs_->ReadFile("/proc/mounts", 4 << 20);
  if (mounts.ok() && MountedReadOnly(*mounts, plan->tracefs)) {
    *outcome = Refused(absl::StrCat("tracefs not writable: ", plan->tracefs,
                                    " is mounted read-only"));
    return false;
  }
  for (const std::string& p : {tracer_path, filter_path}) {
    absl::Status w = CheckWritable(fs_->root(), p);
    if (!w.ok()) {
      *outcome = Refused(absl::StrCat("tracefs not writable: ", w.message()));
      return false;
    }
  }
  absl::StatusOr<std::string> filter = fs_->ReadFile(filter_path, kFilterMax);
  if (!filter.ok()) {
    *outcome = Refused(
        absl::StrCat("tracefs not readable: ", filter.status().message()));
    return false;
  }
  plan->previous_filter = *filter;
  std::string error;
  plan->filter_function = FindRareFunction(*fs_, plan->tracefs, &error);
  if (plan->filter_function.empty()) {
    *outcome = Refused(
        error.empty() ? absl::StrCat("no rarely called function (",
                                     absl::StrJoin(kRareFunctions, ", "),
                                     ") in available_filter_functions")
                      : absl::StrCat("available_filter_functions: ", error));
    return false;
  }
  if (!snapshot.threads().has_total()) {
    *outcome = Refused(absl::StrCat("thread count not known: ",
                                    UnknownText(snapshot, "threads.")));
    return false;
  }

  // The current model's constants for this build and host.
  const ModelOptions& mopts = options_.models;
  const KernelFeatures features =
      ResolveKernelFeatures(snapshot.kernel(), mopts);
  const AttachContext ctx = MakeAttachContext(snapshot, mopts, features);
  plan->c = ctx.c;
  plan->fixed_seconds = ctx.fixed_seconds;
  plan->basis = ctx.c_visit_calibrated ? ctx.calibration_source
                                       : std::string("seed default");
  plan->host.threads = snapshot.threads().total();
  plan->host.null_threads = fg.has_null_threads_bound()
                                ? fg.null_threads_bound()
                                : plan->host.threads;
  plan->host.batch = ctx.batch;
  const double budget = options_.budget_seconds;
  plan->k = options_.threads;
  if (plan->k == 0) {
    plan->k =
        ChooseCalibrationThreads(plan->host, budget, kMaxCalibrationThreads,
                                 plan->c, plan->fixed_seconds);
  }
  plan->predicted = PredictCalibrationWalk(
      plan->host, std::max<uint64_t>(plan->k, 1), plan->c, plan->fixed_seconds);
  // After the warm-up only a point's K_j threads lack a stack: with
  // K_j <= B its timed enable is one pass and measures no walk.
  if (plan->k > 0 && plan->k <= plan->host.batch &&
      plan->predicted.seconds <= budget) {
    *outcome = Refused(absl::StrFormat(
        "%d threads are not more than the batch (%d): the first enable would "
        "walk the task list once and measure no walk",
        plan->k, plan->host.batch));
    return false;
  }
  uint64_t points = std::max<uint32_t>(options_.points, 1);
  while (points > 1 && (plan->k + points - 1) / points <= plan->host.batch) {
    --points;
  }
  for (uint64_t j = 1; j <= points; ++j) {
    plan->point_threads.push_back((j * plan->k + points - 1) / points);
  }
  if (plan->k == 0 || plan->predicted.seconds > budget) {
    *outcome = Refused(absl::StrFormat(
        "prediction over the budget: the walk at %d threads (%d without a "
        "shadow stack, c_visit %.1f ns, %s) is predicted at %.6g s, over "
        "--calibrate_budget %.6g s",
        plan->predicted.total_threads, plan->predicted.fresh_threads,
        plan->c.c_visit * 1e9, plan->basis, plan->predicted.seconds, budget));
    return false;
  }
  return true;
}

absl::StatusOr<double> Calibrator::TimedWrite(const std::string& path,
                                              const std::string& tracer) {
  const int64_t start = monotonic_ns_();
  absl::Status s = WriteTracefsFile(fs_->root(), path, tracer);
  const int64_t end = monotonic_ns_();
  if (!s.ok()) return s;
  return static_cast<double>(end - start) * 1e-9;
}

absl::Status Calibrator::TimeEnables(const Plan& plan, bool first_round,
                                     v1::CalibrationPoint* point) {
  const std::string tracer = plan.tracefs + "/current_tracer";
  auto interrupted = [&] {
    return stop_->HasBeenNotified()
               ? absl::CancelledError("interrupted by a signal")
               : absl::OkStatus();
  };
  TH_RETURN_IF_ERROR(interrupted());
  TH_ASSIGN_OR_RETURN(const double first,
                      TimedWrite(tracer, "function_graph\n"));
  if (first_round || first < point->first_enable_seconds()) {
    point->set_first_enable_seconds(first);
  }
  if (first_round && options_.hold_for_test > absl::ZeroDuration()) {
    stop_->WaitForNotificationWithTimeout(options_.hold_for_test);
  }
  TH_RETURN_IF_ERROR(interrupted());
  TH_RETURN_IF_ERROR(WriteTracefsFile(fs_->root(), tracer, "nop\n"));
  TH_ASSIGN_OR_RETURN(const double second,
                      TimedWrite(tracer, "function_graph\n"));
  if (first_round || second < point->second_enable_seconds()) {
    point->set_second_enable_seconds(second);
  }
  TH_RETURN_IF_ERROR(WriteTracefsFile(fs_->root(), tracer, "nop\n"));
  return interrupted();
}

absl::Status Calibrator::WarmUp(const Plan& plan) {
  const std::string tracer = plan.tracefs + "/current_tracer";
  if (stop_->HasBeenNotified()) {
    return absl::CancelledError("interrupted by a signal");
  }
  TH_RETURN_IF_ERROR(WriteTracefsFile(fs_->root(),
                                      plan.tracefs + "/set_ftrace_filter",
                                      plan.filter_function + "\n"));
  TH_RETURN_IF_ERROR(WriteTracefsFile(fs_->root(), tracer, "function_graph\n"));
  return WriteTracefsFile(fs_->root(), tracer, "nop\n");
}

absl::Status Calibrator::Measure(const Plan& plan, v1::Calibration* c) {
  TH_ASSIGN_OR_RETURN(std::unique_ptr<CalibrationLock> lock,
                      CalibrationLock::TryAcquire(options_.state_dir));
  v1::CalibrationJournal journal;
  journal.set_pid(getpid());
  *journal.mutable_started_at() = ToProto(clock_());
  journal.set_tracefs(plan.tracefs);
  journal.set_current_tracer(plan.previous_tracer);
  journal.set_ftrace_filter(plan.previous_filter);
  // Durably on disk before tracefs changes: a SIGKILL from here on is
  // undone by the next start.
  TH_RETURN_IF_ERROR(WriteJournal(options_.state_dir, journal));
  // The warm-up, untimed, before any of the calibration's threads exist:
  // every thread on the host gets its shadow stack (however many lacked
  // one: the NULL-thread bound is an upper bound, and an earlier user the
  // agent did not see leaves it too high), and a first-ever enable's
  // one-time work is done.
  absl::Status status = WarmUp(plan);
  const uint32_t repeats = std::max<uint32_t>(options_.repeats, 1);
  c->set_repetitions(repeats);
  c->clear_points();
  for (uint64_t k : plan.point_threads) c->add_points()->set_threads(k);
  std::unique_ptr<IdleThreads> threads;
  for (uint32_t round = 0; round < repeats && status.ok(); ++round) {
    for (v1::CalibrationPoint& point : *c->mutable_points()) {
      // New threads each time: none has a stack, all at the tail.
      threads.reset();
      threads = std::make_unique<IdleThreads>();
      status = threads->Start(point.threads());
      if (!status.ok()) break;
      // The fixture trees do not count this process's threads: at least
      // K_j more than before.
      v1::ThreadCounts counts;
      UnknownInputs unknown;
      (void)ReadThreadCounts(*fs_, &counts, &unknown);
      const uint64_t total = std::max<uint64_t>(
          counts.total(), plan.host.threads + point.threads());
      // Only the K_j threads started since the warm-up lack a stack (and
      // any thread another process forked meanwhile, not counted). The
      // largest of the rounds' counts is kept.
      point.set_total_threads(std::max(point.total_threads(), total));
      point.set_fresh_threads(std::min<uint64_t>(total, point.threads()));
      status = TimeEnables(plan, round == 0, &point);
      if (!status.ok()) break;
    }
  }
  // Whatever happened: the filter and tracer back, then the threads.
  std::vector<std::string> refused;
  absl::Status restored = RestoreFromJournal(fs_->root(), journal, &refused);
  threads.reset();
  if (!refused.empty() && options_.log) {
    options_.log(absl::StrCat(
        "warning: set_ftrace_filter lines tracefs did not take back: ",
        absl::StrJoin(refused, ", ")));
  }
  if (!restored.ok()) {
    return absl::Status(
        restored.code(),
        absl::StrCat("restoring tracefs (the journal stays for the next "
                     "start): ",
                     restored.message(),
                     status.ok() ? "" : absl::StrCat("; ", status.message())));
  }
  TH_RETURN_IF_ERROR(RemoveJournal(options_.state_dir));
  return status;
}

CalibrationOutcome Calibrator::Run() {
  CollectorOptions copts;
  copts.state_dir = options_.state_dir;
  copts.features = options_.models.features;
  Collector collector(fs_, copts, clock_);
  const v1::HostSnapshot snapshot = collector.Collect();
  Plan plan;
  CalibrationOutcome outcome;
  if (!Prepare(snapshot, &plan, &outcome)) return outcome;

  v1::Calibration& c = outcome.calibration;
  c.set_host_id(options_.host_id);
  c.set_threads(static_cast<uint32_t>(plan.k));
  c.set_batch(plan.host.batch);
  c.set_filter_function(plan.filter_function);
  c.set_cpu_model(snapshot.cpus().model_name());
  c.set_kernel_release(snapshot.kernel().release());
  c.set_kernel_version(snapshot.kernel().version());
  c.set_preempt_mode(snapshot.kernel().preempt_mode());
  c.set_hardware_class(
      HardwareClass(snapshot.cpus().model_name(), snapshot.kernel().release()));
  c.set_predicted_seconds(plan.predicted.seconds);
  c.set_budget_seconds(options_.budget_seconds);
  c.set_predicted_basis(plan.basis);
  c.set_origin(v1::CONSTANTS_ORIGIN_HOST_CALIBRATION);  // measured here
  if (options_.log) {
    options_.log(absl::StrFormat(
        "calibrating: %s idle threads, %d round(s), %s limited to %s; the "
        "largest first enable is predicted at %.6g s (%d threads, %d without "
        "a shadow stack; c_visit %.1f ns, %s)",
        absl::StrJoin(plan.point_threads, ", "),
        std::max<uint32_t>(options_.repeats, 1), plan.tracefs,
        plan.filter_function, plan.predicted.seconds,
        plan.predicted.total_threads, plan.predicted.fresh_threads,
        plan.c.c_visit * 1e9, plan.basis));
  }
  absl::Status measured = Measure(plan, &c);
  if (absl::IsUnavailable(measured)) {
    return Refused(std::string(measured.message()));
  }
  if (!measured.ok()) return Failed(std::string(measured.message()));
  std::vector<CalibrationPoint> points;
  for (v1::CalibrationPoint& p : *c.mutable_points()) {
    const WalkCost walk = ShadowStackWalk(p.total_threads(), p.fresh_threads(),
                                          c.batch(), NullPlacement::kTail);
    p.set_first_visits(walk.visits);
    p.set_first_passes(walk.passes);
    points.push_back({p.total_threads(), p.fresh_threads(),
                      p.first_enable_seconds(), p.second_enable_seconds()});
  }
  // The top-level fields: the largest point.
  const v1::CalibrationPoint& largest = c.points(c.points_size() - 1);
  c.set_total_threads(largest.total_threads());
  c.set_fresh_threads(largest.fresh_threads());
  c.set_first_enable_seconds(largest.first_enable_seconds());
  c.set_second_enable_seconds(largest.second_enable_seconds());
  c.set_first_visits(largest.first_visits());
  c.set_first_passes(largest.first_passes());
  // The fit prices visits with this calibration's own walk, or one price.
  WalkConstants assumed = plan.c;
  assumed.levels.clear();
  if (options_.memory_walk) {
    const uint64_t max_tasks = std::max<uint64_t>(
        4 * uint64_t{largest.threads()}, 2 * largest.total_threads());
    absl::StatusOr<std::vector<v1::MemoryWalkPoint>> walk =
        options_.memory_walk(max_tasks);
    if (walk.ok()) {
      for (const v1::MemoryWalkPoint& p : *walk) *c.add_memory_walk() = p;
      assumed.levels = VisitLevelsOf(c);
    } else if (options_.log) {
      options_.log(absl::StrCat("calibrating: ", walk.status().message(),
                                "; one price a visit"));
    }
  }
  absl::StatusOr<DerivedConstants> d =
      FitCalibration(points, c.batch(), assumed);
  if (!d.ok()) return Failed(std::string(d.status().message()));
  c.set_c_pass_seconds(d->c_pass_seconds);
  c.set_c_pass_fitted(d->c_pass_fitted);
  c.set_c_visit_seconds(d->c_visit_seconds);
  c.set_fixed_seconds(d->fixed_seconds);
  *c.mutable_measured_at() = ToProto(clock_());
  outcome.kind = CalibrationOutcome::kCalibrated;
  return outcome;
}

}  // namespace tracehealth::agent
