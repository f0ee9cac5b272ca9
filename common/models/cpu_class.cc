#include "common/models/cpu_class.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace tracehealth {

double CpuClassConfidenceLoss(v1::CpuClass cls) {
  switch (cls) {
    case v1::CPU_CLASS_FITTED:
      return 0;
    case v1::CPU_CLASS_VIRTUALIZED:
      return 0.2;
    case v1::CPU_CLASS_EMULATED:
      return 0.4;
    default:
      return 0.1;
  }
}

bool IsSapphireRapids(absl::string_view model_name) {
  // Written out (not "Xeon(R) " + tier): a fleet-wide query classifies
  // every host's CPU, and this allocates nothing.
  for (absl::string_view prefix : {"Xeon(R) Platinum ", "Xeon(R) Gold ",
                                   "Xeon(R) Silver ", "Xeon(R) Bronze "}) {
    const size_t at = model_name.find(prefix);
    if (at == absl::string_view::npos) continue;
    absl::string_view number = model_name.substr(at + prefix.size());
    if (number.size() >= 4 && absl::ascii_isdigit(number[0]) &&
        number[1] == '4' && absl::ascii_isdigit(number[2]) &&
        absl::ascii_isdigit(number[3]) &&
        (number.size() == 4 || !absl::ascii_isdigit(number[4]))) {
      return true;
    }
  }
  return false;
}

v1::CpuClass ClassifyCpu(const v1::CpuInfo& cpus,
                         bool fitted_on_sapphire_rapids) {
  if (cpus.has_model_name() && absl::StrContains(cpus.model_name(), "TCG")) {
    return v1::CPU_CLASS_EMULATED;
  }
  if (cpus.has_hypervisor() && cpus.hypervisor()) {
    return v1::CPU_CLASS_VIRTUALIZED;
  }
  if (!cpus.has_model_name() || cpus.model_name().empty()) {
    return v1::CPU_CLASS_UNKNOWN;
  }
  if (fitted_on_sapphire_rapids && IsSapphireRapids(cpus.model_name())) {
    return v1::CPU_CLASS_FITTED;
  }
  return v1::CPU_CLASS_OTHER;
}

}  // namespace tracehealth
