#include "agent/collect/tracefs_users.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/parsers/tracefs.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSmallFile = 64 * 1024;
constexpr size_t kDynamicEventsMax = 4 << 20;

void AddUser(v1::FgraphState* fgraph, v1::FgraphUser::Kind kind,
             std::string where) {
  v1::FgraphUser* u = fgraph->add_users();
  u->set_kind(kind);
  u->set_where(std::move(where));
}

// The tracers of the top level ("") and of every instance. Returns false
// when one of them could not be read.
bool ReadTracers(const HostFs& fs, const std::string& t,
                 v1::FgraphState* fgraph, UnknownInputs* unknown) {
  bool all_known = true;
  std::vector<std::string> instances = {""};
  absl::StatusOr<std::vector<std::string>> names =
      fs.ListDir(t + "/instances", 4096);
  if (names.ok()) {
    std::sort(names->begin(), names->end());
    instances.insert(instances.end(), names->begin(), names->end());
  } else if (!absl::IsNotFound(names.status())) {
    all_known = false;
    AddUnknown(unknown, "fgraph.instances", names.status().message());
  }
  for (const std::string& inst : instances) {
    std::string dir = inst.empty() ? t : absl::StrCat(t, "/instances/", inst);
    absl::StatusOr<std::string> tracer_text =
        fs.ReadFile(dir + "/current_tracer", kSmallFile);
    absl::StatusOr<std::string> tracer =
        tracer_text.ok() ? ParseCurrentTracer(*tracer_text)
                         : absl::StatusOr<std::string>(tracer_text.status());
    if (!tracer.ok()) {
      all_known = false;
      AddUnknown(unknown,
                 inst.empty() ? "fgraph.current_tracer"
                              : absl::StrCat("fgraph.instances.", inst,
                                             ".current_tracer"),
                 tracer.status().message());
      continue;
    }
    if (*tracer == "nop") continue;
    if (*tracer == "function_graph") {
      AddUser(fgraph, v1::FgraphUser::KIND_FUNCTION_GRAPH_TRACER, inst);
      continue;
    }
    bool display_graph = false;
    absl::StatusOr<std::string> dg =
        fs.ReadFile(dir + "/options/display-graph", kSmallFile);
    if (dg.ok()) {
      absl::StatusOr<bool> v = ParseFlagFile(*dg);
      display_graph = v.ok() && *v;
    }
    if (TracerUsesFgraph(*tracer, display_graph)) {
      AddUser(fgraph, v1::FgraphUser::KIND_GRAPH_LATENCY_TRACER,
              inst.empty() ? *tracer : absl::StrCat(inst, ": ", *tracer));
    }
  }
  return all_known;
}

}  // namespace

bool FprobeFgraphRule::Registers(std::optional<bool> is_return) const {
  if (!on_fgraph) return false;
  if (entry_only_off && is_return.has_value() && !*is_return) return false;
  return true;
}

FprobeFgraphRule FprobeFgraphRuleFor(
    const FeatureTable& features, const std::optional<KernelRelease>& release,
    absl::string_view arch) {
  FprobeFgraphRule rule;
  if (release.has_value()) {
    const std::string a = arch.empty() ? "" : NormalizeArch(arch);
    rule.on_fgraph =
        features.Has(feature::kFprobeOnFgraph, *release, a).present;
    rule.entry_only_off =
        features.Has(feature::kFprobeEntryOnlyOffFgraph, *release, a).present;
  }
  return rule;
}

bool ReadTracefsUsers(const HostFs& fs, const std::string& t,
                      const FprobeFgraphRule& rule, v1::FgraphState* fgraph,
                      UnknownInputs* unknown) {
  bool all_known = ReadTracers(fs, t, fgraph, unknown);
  // The function profiler (top level only; absent without
  // CONFIG_FUNCTION_PROFILER).
  absl::StatusOr<std::string> prof =
      fs.ReadFile(t + "/function_profile_enabled", kSmallFile);
  if (prof.ok()) {
    absl::StatusOr<bool> on = ParseFlagFile(*prof);
    if (!on.ok()) {
      all_known = false;
      AddUnknown(unknown, "fgraph.function_profile_enabled",
                 on.status().message());
    } else if (*on) {
      AddUser(fgraph, v1::FgraphUser::KIND_FUNCTION_PROFILER, "");
    }
  } else if (!absl::IsNotFound(prof.status())) {
    all_known = false;
    AddUnknown(unknown, "fgraph.function_profile_enabled",
               prof.status().message());
  }
  // fprobe events.
  absl::StatusOr<std::string> dyn =
      fs.ReadFile(t + "/dynamic_events", kDynamicEventsMax);
  if (dyn.ok()) {
    absl::StatusOr<std::vector<DynamicEvent>> events = ParseDynamicEvents(*dyn);
    if (!events.ok()) {
      all_known = false;
      AddUnknown(unknown, "fgraph.dynamic_events", events.status().message());
    } else {
      for (const DynamicEvent& ev : *events) {
        if (ev.type != 'f' || !rule.Registers(ev.is_return)) continue;
        AddUser(fgraph,
                ev.is_return ? v1::FgraphUser::KIND_FPROBE_RETURN_EVENT
                             : v1::FgraphUser::KIND_FPROBE_EVENT,
                ev.name);
      }
    }
  } else if (!absl::IsNotFound(dyn.status())) {
    all_known = false;
    AddUnknown(unknown, "fgraph.dynamic_events", dyn.status().message());
  }
  return all_known;
}

void SetActiveFromUsers(bool all_known, v1::FgraphState* fgraph,
                        UnknownInputs* unknown) {
  if (fgraph->users_size() > 0) {
    fgraph->set_active(true);
  } else if (all_known) {
    fgraph->set_active(false);
  } else {
    fgraph->clear_active();
    AddUnknown(unknown, "fgraph.active",
               "no fgraph user seen, but not every source could be read");
  }
}

}  // namespace tracehealth::agent
