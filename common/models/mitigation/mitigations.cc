#include "common/models/mitigation/mitigations.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/enum_names.h"
#include "common/format.h"
#include "common/models/evaluate.h"
#include "common/models/fgraph/fgraph_attach.h"
#include "common/models/kernel_features.h"
#include "common/models/mitigation/shadow_stack_memory.h"
#include "common/models/risk.h"

namespace tracehealth {
namespace {

// "1.53 GiB", "937.5 MiB", "48.0 KiB", "512 B".
std::string FormatBytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) {
    return absl::StrFormat("%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  }
  if (bytes >= 1024.0 * 1024) {
    return absl::StrFormat("%.1f MiB", bytes / (1024.0 * 1024));
  }
  if (bytes >= 1024.0) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrFormat("%.0f B", bytes);
}

std::string FormatWait(double seconds) {
  return absl::FormatDuration(absl::Seconds(std::round(seconds)));
}

struct Outcome {
  v1::AttachPrediction p;
  v1::AttachVerdict verdict = v1::ATTACH_VERDICT_UNKNOWN;
};

class Mitigator {
 public:
  Mitigator(const v1::HostSnapshot& s, v1::ProbeKind kind, double budget,
            const ModelOptions& options, const AttachAssessment& a)
      : s_(s), kind_(kind), budget_(budget), options_(options), now_(a) {
    const v1::AttachPrediction& p = now_.prediction;
    walks_ = p.uses_fgraph() && !p.fgraph_already_active();
    sized_ = walks_ && p.passes() > 0;
  }

  void Timing(const std::optional<v1::ThreadTrend>& trend);
  void Warm();
  void KeepGraphUser();
  void OtherProbeKinds();
  void LargerBatch();
  void Preemptible();

  std::vector<v1::Mitigation> Take() {
    std::stable_sort(out_.begin(), out_.end(),
                     [](const v1::Mitigation& a, const v1::Mitigation& b) {
                       return a.fits_budget() && !b.fits_budget();
                     });
    return std::move(out_);
  }

 private:
  Outcome Judge(const v1::HostSnapshot& s, v1::ProbeKind kind,
                ModelOptions o) const {
    o.latency_budget_seconds = budget_;
    Outcome out;
    out.p = PredictAttach(s, kind, o);
    out.verdict = VerdictOf(out.p, budget_);
    return out;
  }
  Outcome Judge(const v1::HostSnapshot& s) const {
    return Judge(s, kind_, options_);
  }
  // The snapshot with `n` threads: shrinking keeps at most the NULL-stack
  // bound; growing adds the new threads to it (forked without a stack).
  v1::HostSnapshot WithThreads(uint64_t n) const;
  // The risk of the walk itself, without a budget (a warm-up has none).
  v1::Risk WalkRisk() const;
  v1::Mitigation* Add(v1::Mitigation::Kind kind, std::string text) {
    v1::Mitigation* m = &out_.emplace_back();
    m->set_kind(kind);
    m->set_text(std::move(text));
    return m;
  }
  static void SetAfter(const Outcome& o, v1::Mitigation* m) {
    m->set_latency_seconds(o.p.latency_seconds());
    m->set_risk(o.p.risk());
    m->set_fits_budget(o.verdict == v1::ATTACH_VERDICT_SAFE);
  }
  std::string Latency() const {
    return FormatSeconds(now_.prediction.latency_seconds());
  }

  const v1::HostSnapshot& s_;
  const v1::ProbeKind kind_;
  const double budget_;
  const ModelOptions& options_;
  const AttachAssessment& now_;
  bool walks_ = false;  // a new fgraph user while fgraph is inactive
  bool sized_ = false;  // ... with a known thread count
  std::vector<v1::Mitigation> out_;
};

v1::HostSnapshot Mitigator::WithThreads(uint64_t n) const {
  v1::HostSnapshot s = s_;
  const uint64_t total = s_.threads().total();
  s.mutable_threads()->set_total(n);
  v1::FgraphState* fg = s.mutable_fgraph();
  if (fg->has_null_threads_bound()) {
    const uint64_t bound = fg->null_threads_bound();
    fg->set_null_threads_bound(n <= total ? std::min(bound, n)
                                          : std::min(bound + (n - total), n));
  }
  return s;
}

v1::Risk Mitigator::WalkRisk() const {
  ModelOptions o = options_;
  o.latency_budget_seconds.reset();
  return PredictAttach(s_, kind_, o).risk();
}

void Mitigator::Timing(const std::optional<v1::ThreadTrend>& trend) {
  if (!sized_) return;
  if (!trend.has_value()) {
    Add(v1::Mitigation::KIND_TIMING,
        "attach now or later: thread trend unknown (no history of this "
        "host's thread count)");
    return;
  }
  const double rate = trend->threads_per_second();
  const uint64_t total = s_.threads().total();
  const std::string over =
      absl::StrCat("over ", FormatWait(trend->window_seconds()), ", ",
                   trend->samples(), " samples");
  if (std::fabs(rate) < kSteadyThreadsPerSecond) {
    v1::Mitigation* m =
        Add(v1::Mitigation::KIND_TIMING,
            absl::StrCat("attach now or later: threads steady (",
                         absl::StrFormat("%+.2f", rate), "/s ", over,
                         "): later costs the same ", Latency()));
    m->set_wait_seconds(0);
    *m->mutable_trend() = *trend;
    SetAfter(Outcome{now_.prediction, now_.verdict}, m);
    return;
  }
  if (rate > 0) {
    const uint64_t later =
        total +
        static_cast<uint64_t>(std::llround(rate * kGrowthHorizonSeconds));
    const Outcome o = Judge(WithThreads(later));
    v1::Mitigation* m = Add(
        v1::Mitigation::KIND_TIMING,
        absl::StrCat("attach now rather than later: threads rising ",
                     absl::StrFormat("%.1f", rate), "/s (", over, "); in ",
                     FormatWait(kGrowthHorizonSeconds), " (", later,
                     " threads) about ", FormatSeconds(o.p.latency_seconds()),
                     " instead of ", Latency()));
    m->set_wait_seconds(0);
    *m->mutable_trend() = *trend;
    SetAfter(Outcome{now_.prediction, now_.verdict}, m);
    return;
  }
  // Shrinking: the largest thread count at which the attach is safe.
  uint64_t lo = 0, hi = total;  // safe(lo) is tested below; unsafe(hi)
  if (Judge(WithThreads(0)).verdict != v1::ATTACH_VERDICT_SAFE) {
    Add(v1::Mitigation::KIND_TIMING,
        absl::StrCat("attach later does not help: threads falling ",
                     absl::StrFormat("%.1f", -rate), "/s, but the attach is ",
                     "unsafe at any thread count"));
    return;
  }
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (Judge(WithThreads(mid)).verdict == v1::ATTACH_VERDICT_SAFE ? lo : hi) =
        mid;
  }
  const double wait = static_cast<double>(total - lo) / -rate;
  const Outcome o = Judge(WithThreads(lo));
  const std::string when =
      wait > kMaxWaitSeconds
          ? absl::StrCat("in more than ", FormatWait(kMaxWaitSeconds))
          : absl::StrCat("in ", FormatWait(wait));
  v1::Mitigation* m =
      Add(v1::Mitigation::KIND_TIMING,
          absl::StrCat("attach later: threads falling ",
                       absl::StrFormat("%.1f", -rate), "/s (", over, "); ",
                       when, " (at ", lo, " threads) about ",
                       FormatSeconds(o.p.latency_seconds())));
  m->set_wait_seconds(wait);
  *m->mutable_trend() = *trend;
  SetAfter(o, m);
}

void Mitigator::Warm() {
  if (!sized_) return;
  const v1::AttachPrediction& p = now_.prediction;
  const v1::Risk walk_risk = WalkRisk();
  const bool stalls =
      walk_risk == v1::RISK_STALL || walk_risk == v1::RISK_WARNING;
  const std::string once = absl::StrCat(
      "warm the shadow stacks in a quiet moment (function_graph on one "
      "function in a tracefs instance, then nop): the same ",
      FormatSeconds(p.walk_seconds()), " walk once",
      stalls ? absl::StrCat(" (itself a ", RiskName(walk_risk),
                            " risk on this kernel)")
             : "");
  const v1::ThreadCounts& t = s_.threads();
  const bool rate_known = t.has_forks_since_boot() && t.has_uptime_seconds() &&
                          t.uptime_seconds() > 0;
  v1::Mitigation* m;
  if (!rate_known) {
    m = Add(v1::Mitigation::KIND_WARM_SHADOW_STACKS,
            absl::StrCat(once,
                         "; the attach after it walks only the threads "
                         "forked since (fork rate unknown)"));
  } else {
    const double rate =
        static_cast<double>(t.forks_since_boot()) / t.uptime_seconds();
    const uint64_t forked = std::min<uint64_t>(
        t.total(),
        static_cast<uint64_t>(std::ceil(rate * kWarmAttachWithinSeconds)));
    // As many forks as threads without a stack now: warming gains nothing.
    if (forked >= p.null_threads()) return;
    v1::HostSnapshot warmed = s_;
    warmed.mutable_fgraph()->set_null_threads_bound(forked);
    const Outcome o = Judge(warmed);
    m = Add(
        v1::Mitigation::KIND_WARM_SHADOW_STACKS,
        absl::StrCat(once, "; attached within ",
                     FormatWait(kWarmAttachWithinSeconds), " after it, ",
                     forked, " threads forked since (",
                     absl::StrFormat("%.1f", rate), "/s) lack a stack: about ",
                     FormatSeconds(o.p.latency_seconds())));
    SetAfter(o, m);
  }
  m->set_cost_seconds(p.walk_seconds());
  m->set_cost_risk(walk_risk);
}

void Mitigator::KeepGraphUser() {
  if (!walks_) return;
  const std::optional<ShadowStackSize> size =
      ShadowStackBytes(s_.kernel(), *options_.features);
  // Before 6.11 (fgraph_multi_user) the kernel takes one graph user at a
  // time: a standing one would make it refuse a graph tracer (-EBUSY).
  const KernelFeatures features = ResolveKernelFeatures(s_.kernel(), options_);
  if (IsGraphTracerKind(kind_) && features.release &&
      !features.fgraph_multi_user.present) {
    return;
  }
  v1::HostSnapshot active = s_;
  active.mutable_fgraph()->set_active(true);
  active.mutable_fgraph()->set_null_threads_bound(0);
  const Outcome o = Judge(active);
  std::string memory = "memory unknown (kernel release unknown)";
  if (size.has_value() && sized_) {
    memory = absl::StrCat(
        "holds ",
        FormatBytes(static_cast<double>(s_.threads().total() * size->bytes)),
        " (", s_.threads().total(), " threads x ", size->bytes, " B, ",
        size->origin, ")");
  } else if (size.has_value()) {
    memory = absl::StrCat("holds ", size->bytes,
                          " B per thread (thread count unknown)");
  }
  v1::Mitigation* m = Add(
      v1::Mitigation::KIND_KEEP_GRAPH_USER,
      absl::StrCat("keep one graph user standing (function_graph on one "
                   "rarely called function in a tracefs instance): after "
                   "its own first walk, new threads get a shadow stack at "
                   "fork and this attach takes about ",
                   FormatSeconds(o.p.latency_seconds()),
                   " (one pass over the threads, init_task_vars); ", memory));
  SetAfter(o, m);
  if (sized_) {
    m->set_cost_seconds(now_.prediction.walk_seconds());
    m->set_cost_risk(WalkRisk());
  }
  if (size.has_value()) {
    m->set_bytes_per_thread(size->bytes);
    if (sized_) m->set_memory_bytes(s_.threads().total() * size->bytes);
  }
}

void Mitigator::OtherProbeKinds() {
  // Also for a new user on an active fgraph: its pass over the threads.
  const v1::AttachPrediction& now = now_.prediction;
  if (!now.uses_fgraph() || now.busy()) return;
  // The same call sites as the attach asked for.
  ModelOptions o = options_;
  o.sites = now_.prediction.patch_sites();
  const bool fprobe_off =
      s_.kernel().has_config_fprobe() && !s_.kernel().config_fprobe();
  const KernelFeatures features = ResolveKernelFeatures(s_.kernel(), o);
  for (v1::ProbeKind k :
       {v1::PROBE_KIND_FENTRY_FEXIT, v1::PROBE_KIND_KRETPROBE,
        v1::PROBE_KIND_KPROBE_MULTI, v1::PROBE_KIND_KPROBE_MULTI_RETURN,
        v1::PROBE_KIND_FPROBE_EVENT, v1::PROBE_KIND_FPROBE_RETURN_EVENT}) {
    if (k == kind_ || (IsFprobeKind(k) && fprobe_off)) continue;
    const Outcome out = Judge(s_, k, o);
    if (out.p.uses_fgraph() || out.p.risk() == v1::RISK_UNKNOWN) continue;
    std::string why;
    switch (DecideFgraphUse(k, features).rule) {
      case FgraphUseRule::kTrampoline:
        why = "BPF trampolines, never a shadow-stack walk";
        break;
      case FgraphUseRule::kKretprobe:
        why = "rethook, never a shadow-stack walk";
        break;
      case FgraphUseRule::kFprobeOnRethook:
        why = absl::StrCat("fprobe is built on rethook, not fgraph, on ",
                           s_.kernel().release());
        break;
      default:
        why = absl::StrCat("no return probe: entry-only fprobes do not ",
                           "register fgraph on ", s_.kernel().release());
    }
    // No walk, but each kind pays its own registration per site (a BPF
    // trampoline update per fentry probe: seconds for thousands), and its
    // detach: both said, so a slower alternative is not passed off as a
    // cure.
    const double per_site =
        out.p.patch_sites() > 0
            ? out.p.patch_seconds() / static_cast<double>(out.p.patch_sites())
            : 0;
    v1::Mitigation* m =
        Add(v1::Mitigation::KIND_OTHER_PROBE_KIND,
            absl::StrCat("use ", ProbeKindFlag(k), " instead (", why,
                         "): about ", FormatSeconds(out.p.latency_seconds()),
                         " for ", out.p.patch_sites(), " site(s) at ",
                         FormatSeconds(per_site), " each, detaching about ",
                         FormatSeconds(out.p.detach_seconds())));
    m->set_probe_kind(k);
    SetAfter(out, m);
  }
}

void Mitigator::LargerBatch() {
  if (!sized_ || now_.prediction.batch() >= kPatchedRetstackBatch) return;
  ModelOptions o = options_;
  o.batch = kPatchedRetstackBatch;
  const Outcome out = Judge(s_, kind_, o);
  v1::Mitigation* m = Add(
      v1::Mitigation::KIND_LARGER_BATCH,
      absl::StrCat(
          "a kernel with FTRACE_RETSTACK_ALLOC_SIZE ", kPatchedRetstackBatch,
          " (no release through 7.1; a patched build): ", out.p.passes(),
          out.p.passes() == 1 ? " pass" : " passes", ", about ",
          FormatSeconds(out.p.latency_seconds()), " instead of ", Latency()));
  m->set_batch(kPatchedRetstackBatch);
  SetAfter(out, m);
}

void Mitigator::Preemptible() {
  const v1::Risk r = now_.prediction.risk();
  if (!sized_ || (r != v1::RISK_STALL && r != v1::RISK_WARNING) ||
      PreemptibilityOf(s_.kernel().preempt_mode()) !=
          Preemptibility::kNonPreemptible) {
    return;
  }
  v1::HostSnapshot full = s_;
  full.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_FULL);
  const Outcome out = Judge(full);
  const std::string how =
      s_.kernel().preempt_dynamic()
          ? "switch to preempt=full (PREEMPT_DYNAMIC: at run time through "
            "/sys/kernel/debug/sched/preempt, or preempt=full at boot)"
          : "a preemptible kernel (CONFIG_PREEMPT or CONFIG_PREEMPT_LAZY)";
  // The walk's c_visit is keyed on the build: a static NONE/VOLUNTARY
  // kernel replaced by a preemptible build is predicted at the larger one.
  const std::string after = FormatSeconds(out.p.latency_seconds());
  const std::string cost =
      after == Latency()
          ? absl::StrCat("the same ", after)
          : absl::StrCat("about ", after, " instead of ", Latency());
  v1::Mitigation* m = Add(
      v1::Mitigation::KIND_PREEMPTIBLE,
      absl::StrCat(how, ": ", cost,
                   ", but preemptible: the caller waits (tracing and module "
                   "loading wait on ftrace_lock as long), the CPU does not "
                   "stall"));
  SetAfter(out, m);
}

}  // namespace

std::vector<v1::Mitigation> Mitigate(
    const v1::HostSnapshot& snapshot, v1::ProbeKind kind, double budget_seconds,
    const ModelOptions& options, const AttachAssessment& assessment,
    const std::optional<v1::ThreadTrend>& trend) {
  if (assessment.verdict == v1::ATTACH_VERDICT_SAFE) return {};
  Mitigator m(snapshot, kind, budget_seconds, options, assessment);
  m.Timing(trend);
  m.Warm();
  m.KeepGraphUser();
  m.OtherProbeKinds();
  m.LargerBatch();
  m.Preemptible();
  return m.Take();
}

}  // namespace tracehealth
