// The hand-worked cases of what_if_hosts_test: every what-if field on a
// mainline, a Debian and an Ubuntu fixture host, with the answer the models
// must give (uses fgraph, busy, passes, risk, latency, a basis note), each
// number worked out in what_if_cases.cc from common/kernel/features.yaml
// and the formulas of docs/design.md §3.1.
#ifndef TRACEHEALTH_TESTS_SERVER_WHAT_IF_CASES_H_
#define TRACEHEALTH_TESTS_SERVER_WHAT_IF_CASES_H_

#include <cstdint>
#include <vector>

#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth::testing {

// A fixture host by the kind of kernel it runs (what_if_cases.cc says what
// each one is).
struct Host {
  const char* id;
  const char* fixture;
};
inline constexpr Host kHosts[] = {
    {"mainline", "kasan-6.12-256cpu"},
    {"debian", "preempt-none-6.16-240k"},
    {"ubuntu", "kprobe-multi-6.14"},
};

struct Expect {
  bool uses_fgraph;
  bool busy;
  uint64_t passes;
  v1::Risk risk;
  double latency;
  // A basis note that must be there ("" none).
  const char* note = "";
  // 0: not checked.
  uint64_t shadow_stack_bytes = 0;
};

struct Case {
  const char* host;
  v1::ProbeKind kind;
  // The what-if in protobuf text format.
  const char* what_if;
  Expect want;
};

inline constexpr v1::ProbeKind kMulti = v1::PROBE_KIND_KPROBE_MULTI;

// A fprobe kind's patching: its typical 100 sites at 1.069 s / 48,712 each
// (2.1945 ms).
extern const double kFprobePatch;
// The note that says an entry-only fprobe no longer uses fgraph.
extern const char kEntryOnlyOff[];
// The basis note of a what-if kernel release, before the release.
extern const char kOverriddenNote[];

// Every case, on every host kind.
std::vector<Case> Cases();

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_SERVER_WHAT_IF_CASES_H_
