#include "agent/gate/fresh_inputs.h"

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "agent/collect/tracefs_users.h"
#include "agent/collect/unknown_input.h"
#include "agent/parsers/proc.h"
#include "agent/state/fgraph_memory.h"
#include "common/kernel/release.h"
#include "common/proto_time.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSmallFile = 64 * 1024;
constexpr size_t kStatMax = 4 << 20;

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

void ReadThreads(const HostFs& fs, v1::ThreadCounts* t,
                 UnknownInputs* unknown) {
  t->Clear();
  absl::StatusOr<std::string> la = fs.ReadFile("/proc/loadavg", kSmallFile);
  absl::StatusOr<Loadavg> load =
      la.ok() ? ParseLoadavg(*la) : absl::StatusOr<Loadavg>(la.status());
  if (load.ok()) {
    t->set_total(load->total);
    t->set_running(load->running);
  } else {
    AddUnknown(unknown, "threads.total", load.status().message());
  }
  absl::StatusOr<std::string> stat = fs.ReadFile("/proc/stat", kStatMax);
  absl::StatusOr<uint64_t> forks =
      stat.ok() ? ParseStatProcesses(*stat)
                : absl::StatusOr<uint64_t>(stat.status());
  if (forks.ok()) {
    t->set_forks_since_boot(*forks);
  } else {
    AddUnknown(unknown, "threads.forks_since_boot", forks.status().message());
  }
  absl::StatusOr<std::string> up = fs.ReadFile("/proc/uptime", kSmallFile);
  absl::StatusOr<double> uptime =
      up.ok() ? ParseUptime(*up) : absl::StatusOr<double>(up.status());
  if (uptime.ok()) {
    t->set_uptime_seconds(*uptime);
  } else {
    AddUnknown(unknown, "threads.uptime_seconds", uptime.status().message());
  }
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
    all_known &=
        ReadTracefsUsers(fs, fg->tracefs_path(),
                         FprobeFgraphRuleFor(features, release), fg, unknown);
  } else {
    all_known = false;  // the snapshot says why (fgraph.tracefs_path)
  }
  if (fg->users_size() > 0) {
    fg->set_active(true);
  } else if (all_known) {
    fg->set_active(false);
  } else {
    AddUnknown(unknown, "fgraph.active",
               "no fgraph user seen, but not every source could be read");
  }
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
  ReadThreads(fs, s.mutable_threads(), unknown);
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
