#include "common/event_names.h"

#include "absl/strings/str_cat.h"

namespace tracehealth {

const char* EventKindName(v1::ObservedEventKind kind) {
  switch (kind) {
    case v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP:
      return "soft lockup";
    case v1::OBSERVED_EVENT_KIND_RCU_STALL:
      return "RCU stall";
    case v1::OBSERVED_EVENT_KIND_HUNG_TASK:
      return "hung task";
    default:
      return "unspecified event";
  }
}

const char* EventKindLabel(v1::ObservedEventKind kind) {
  switch (kind) {
    case v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP:
      return "soft_lockup";
    case v1::OBSERVED_EVENT_KIND_RCU_STALL:
      return "rcu_stall";
    case v1::OBSERVED_EVENT_KIND_HUNG_TASK:
      return "hung_task";
    default:
      return "unspecified";
  }
}

const char* EventModelName(v1::EventModel model) {
  switch (model) {
    case v1::EVENT_MODEL_FGRAPH_ATTACH:
      return "fgraph attach";
    case v1::EVENT_MODEL_VMAP_PURGE:
      return "vmap purge";
    case v1::EVENT_MODEL_STACK_DEPOT:
      return "stack depot";
    default:
      return "unattributed";
  }
}

const char* EventModelLabel(v1::EventModel model) {
  switch (model) {
    case v1::EVENT_MODEL_FGRAPH_ATTACH:
      return "fgraph";
    case v1::EVENT_MODEL_VMAP_PURGE:
      return "vmap";
    case v1::EVENT_MODEL_STACK_DEPOT:
      return "depot";
    default:
      return "none";
  }
}

const char* RcuFlavorName(v1::RcuFlavor flavor) {
  switch (flavor) {
    case v1::RCU_FLAVOR_SCHED:
      return "rcu_sched";
    case v1::RCU_FLAVOR_PREEMPT:
      return "rcu_preempt";
    case v1::RCU_FLAVOR_OTHER:
      return "other RCU";
    default:
      return "";
  }
}

std::string DescribeEvent(const v1::ObservedEvent& e) {
  std::string out = EventKindName(e.kind());
  switch (e.kind()) {
    case v1::OBSERVED_EVENT_KIND_SOFT_LOCKUP:
      if (e.has_cpu()) absl::StrAppend(&out, ", CPU#", e.cpu());
      if (e.has_seconds()) {
        absl::StrAppend(&out, e.has_cpu() ? " stuck " : ", stuck ", e.seconds(),
                        " s");
      }
      break;
    case v1::OBSERVED_EVENT_KIND_RCU_STALL:
      absl::StrAppend(&out, " (", RcuFlavorName(e.rcu_flavor()),
                      e.rcu_self_detected() ? ", self-detected)" : ")");
      if (e.has_cpu()) absl::StrAppend(&out, ", CPU ", e.cpu());
      if (e.has_stall_jiffies()) {
        absl::StrAppend(&out, ", t=", e.stall_jiffies(), " jiffies");
      }
      break;
    case v1::OBSERVED_EVENT_KIND_HUNG_TASK:
      if (e.has_seconds()) {
        absl::StrAppend(&out, ", blocked ", e.seconds(), " s");
      }
      break;
    default:
      break;
  }
  if (!e.comm().empty() || e.has_pid()) {
    absl::StrAppend(&out, ", ", e.comm(),
                    e.has_pid() ? absl::StrCat("[", e.pid(), "]") : "");
  }
  return out;
}

}  // namespace tracehealth
