#include "common/models/fgraph/hardware_class.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/kernel/release.h"

namespace tracehealth {

std::string KernelReleaseFamily(absl::string_view release) {
  absl::StatusOr<KernelRelease> r = ParseKernelRelease(release);
  if (!r.ok()) return "";
  return absl::StrCat(r->major, ".", r->minor);
}

std::string HardwareClass(absl::string_view cpu_model,
                          absl::string_view kernel_release) {
  // /proc/cpuinfo pads some model names ("Intel(R) Xeon(R) CPU  E5-2690").
  std::string model(absl::StripAsciiWhitespace(cpu_model));
  absl::RemoveExtraAsciiWhitespace(&model);
  const std::string family = KernelReleaseFamily(kernel_release);
  if (model.empty() || family.empty()) return "";
  return absl::StrCat(model, " / ", family);
}

}  // namespace tracehealth
