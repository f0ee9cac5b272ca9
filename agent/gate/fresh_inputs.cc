#include "agent/gate/fresh_inputs.h"

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "agent/collect/thread_counts.h"
#include "agent/collect/tracefs_users.h"
#include "agent/collect/unknown_input.h"
#include "agent/state/fgraph_memory.h"
#include "common/kernel/release.h"
#include "common/proto_time.h"

namespace tracehealth::agent {
namespace {

// Inputs this read replaces, by their unknown-input names.
bool Refreshed(const std::string& input) {
  return input == "threads.total" || input == "threads.forks_since_boot" ||
         input == "threads.uptime_seconds" || input == "fgraph.active" ||
         input == "fgraph.null_threads_bound" ||
         input == "fgraph.current_tracer" ||
         absl::StartsWith(input, "fgraph.instances") ||
         input == "fgraph.function_profile_enabled" ||
         input == "fgraph.dynamic_events";
}

bool HasUnknown(const UnknownInputs& unknown, const char* input) {
  for (const v1::UnknownInput& u : unknown) {
    if (u.input() == input) return true;
  }
  return false;
}

// Users again: tracefs read now, BPF links from the snapshot's scan.
void ReadUsers(const HostFs& fs, const FeatureTable& features,
               const v1::HostSnapshot& last, v1::FgraphState* fg,
               UnknownInputs* unknown) {
  fg->clear_users();
  fg->clear_active();
  for (const v1::FgraphUser& u : last.fgraph().users()) {
    if (u.kind() == v1::FgraphUser::KIND_BPF_KPROBE_MULTI ||
        u.kind() == v1::FgraphUser::KIND_BPF_KPROBE_MULTI_RETURN) {
      *fg->add_users() = u;
    }
  }
  bool all_known = !HasUnknown(last.unknown(), "fgraph.kprobe_multi_links");
  if (fg->has_tracefs_path()) {
    std::optional<KernelRelease> release;
    if (last.kernel().has_release()) {
      absl::StatusOr<KernelRelease> r =
          ParseKernelRelease(last.kernel().release());
      if (r.ok()) release = *r;
    }
    all_known &= ReadTracefsUsers(
        fs, fg->tracefs_path(),
        FprobeFgraphRuleFor(features, release, last.kernel().arch()), fg,
        unknown);
  } else {
    all_known = false;  // the snapshot says why (fgraph.tracefs_path)
  }
  SetActiveFromUsers(all_known, fg, unknown);
}

}  // namespace

v1::HostSnapshot RefreshMovingInputs(const HostFs& fs,
                                     const FeatureTable& features,
                                     const v1::HostSnapshot& last) {
  v1::HostSnapshot s = last;
  UnknownInputs* unknown = s.mutable_unknown();
  unknown->Clear();
  for (const v1::UnknownInput& u : last.unknown()) {
    if (!Refreshed(u.input())) *unknown->Add() = u;
  }
  ReadThreadCounts(fs, s.mutable_threads(), unknown).IgnoreError();
  v1::FgraphState* fg = s.mutable_fgraph();
  ReadUsers(fs, features, last, fg, unknown);

  const v1::ThreadCounts& t = s.threads();
  std::optional<bool> active;
  if (fg->has_active()) active = fg->active();
  std::optional<uint64_t> total, forks, forks_at;
  if (t.has_total()) total = t.total();
  if (t.has_forks_since_boot()) forks = t.forks_since_boot();
  std::optional<absl::Time> last_active_at;
  if (fg->has_last_active_at() && fg->has_forks_at_last_active()) {
    last_active_at = FromProto(fg->last_active_at());
    forks_at = fg->forks_at_last_active();
  }
  std::optional<NullBound> bound =
      BoundNullThreads(active, total, forks, last_active_at, forks_at);
  if (bound.has_value()) {
    fg->set_null_threads_bound(bound->bound);
    fg->set_null_threads_basis(bound->basis);
  } else {
    fg->clear_null_threads_bound();
    fg->clear_null_threads_basis();
    AddUnknown(unknown, "fgraph.null_threads_bound",
               "thread count unknown and fgraph not active");
  }
  return s;
}

}  // namespace tracehealth::agent
