// The hardware class calibrations are pooled under: the CPU model and the
// kernel release family (major.minor), "Intel(R) Xeon(R) Gold 6430 / 6.1".
// Hosts of one class are taken to share the walk's per-visit cost.
//
// Thread safety: pure functions (HardwareClass keeps its last answer per
// thread).
#ifndef TRACEHEALTH_COMMON_MODELS_FGRAPH_HARDWARE_CLASS_H_
#define TRACEHEALTH_COMMON_MODELS_FGRAPH_HARDWARE_CLASS_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tracehealth {

// "6.1" for "6.1.0-28-cloud-amd64"; "" when `release` does not start with
// MAJOR.MINOR.
std::string KernelReleaseFamily(absl::string_view release);

// "<cpu model, runs of white space made one space> / <family>"; "" when
// either part is missing (no class).
std::string HardwareClass(absl::string_view cpu_model,
                          absl::string_view kernel_release);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_FGRAPH_HARDWARE_CLASS_H_
