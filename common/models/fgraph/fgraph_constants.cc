#include "common/models/fgraph/fgraph_constants.h"

#include "common/models/fgraph/fgraph_kernel.h"

namespace tracehealth {

WalkConstants WalkConstantsFor(bool preemption_build) {
  WalkConstants c;
  c.c_visit = preemption_build ? kCVisitPreemptionBuild : kCVisitStaticBuild;
  c.c_pass = kCPass;
  c.c_alloc = kCAlloc;
  return c;
}

std::vector<VisitLevel> SeedVisitLevels(double c_visit, uint64_t l3_bytes) {
  if (l3_bytes == 0 || !(c_visit > 0)) return {};
  return {{static_cast<double>(l3_bytes) / kCacheBytesPerTask,
           1 + kCMissExtra / c_visit}};
}

SiteCosts SiteCostsOf(v1::ProbeKind kind, bool ibt) {
  SiteCosts s;
  if (IsFprobeKind(kind) && ibt) {
    // 89.174 s / 56,140 and 13.245 s / 56,140.
    s.attach = 89.174 / 56140;
    s.detach = 13.245 / 56140;
    s.attach_anchor = s.detach_anchor = v1::ANCHOR_PUBLISHED;
  } else if (IsFprobeKind(kind)) {
    // 1.069 s / 48,712 and 0.373 s / 48,712.
    s.attach = 1.069 / 48712;
    s.detach = 0.373 / 48712;
    s.attach_anchor = s.detach_anchor = v1::ANCHOR_PUBLISHED;
  } else if (kind == v1::PROBE_KIND_KRETPROBE) {
    s.attach = s.detach = 1.0 / 184;
    s.attach_anchor = v1::ANCHOR_PUBLISHED;
  } else if (kind == v1::PROBE_KIND_FENTRY_FEXIT) {
    // 17 s / 2,800 and 300 s / 2,800.
    s.attach = 17.0 / 2800;
    s.detach = 300.0 / 2800;
    s.attach_anchor = s.detach_anchor = v1::ANCHOR_PUBLISHED;
  } else {
    s.attach = s.detach = 1e-6;
  }
  return s;
}

}  // namespace tracehealth
