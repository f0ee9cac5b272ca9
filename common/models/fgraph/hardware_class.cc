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

namespace {

std::string MakeHardwareClass(absl::string_view cpu_model,
                              absl::string_view kernel_release) {
  // /proc/cpuinfo pads some model names ("Intel(R) Xeon(R) CPU  E5-2690").
  std::string model(absl::StripAsciiWhitespace(cpu_model));
  absl::RemoveExtraAsciiWhitespace(&model);
  const std::string family = KernelReleaseFamily(kernel_release);
  if (model.empty() || family.empty()) return "";
  return absl::StrCat(model, " / ", family);
}

}  // namespace

std::string HardwareClass(absl::string_view cpu_model,
                          absl::string_view kernel_release) {
  // The class of the last inputs on this thread: a server prices a fleet's
  // reports one after another, and a fleet has few classes.
  struct Last {
    std::string cpu_model, kernel_release, hardware_class;
    bool set = false;
  };
  thread_local Last last;
  if (!last.set || cpu_model != last.cpu_model ||
      kernel_release != last.kernel_release) {
    last.cpu_model.assign(cpu_model.data(), cpu_model.size());
    last.kernel_release.assign(kernel_release.data(), kernel_release.size());
    last.hardware_class = MakeHardwareClass(cpu_model, kernel_release);
    last.set = true;
  }
  return last.hardware_class;
}

}  // namespace tracehealth
