// Which kind of CPU a host has, against the one a model's constants were
// fitted on: a per-visit cost fitted on one bare-metal server says little
// about a guest, and less about an emulated CPU (a QEMU TCG guest measured
// 400-660 ns per task visit, 4.6-7.5x the fit). Until a calibration for the
// host's class exists, predictions for other classes carry a lower
// confidence and say why.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_MODELS_CPU_CLASS_H_
#define TRACEHEALTH_COMMON_MODELS_CPU_CLASS_H_

#include "absl/strings/string_view.h"
#include "proto/tracehealth/v1/predictions.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth {

// Confidence lost when the constants are applied to another class: none on
// the fitted class, 0.1 on another bare-metal CPU or an unknown one (the
// same as an input taken by default), 0.2 in a guest, 0.4 on an emulated
// CPU.
double CpuClassConfidenceLoss(v1::CpuClass cls);

// Whether `model_name` is a 4th generation Xeon Scalable (Sapphire Rapids:
// "Intel(R) Xeon(R) Platinum 8480+", Gold 6430, Silver 4410Y, Bronze 3408U,
// ...: Platinum/Gold/Silver/Bronze with a four-digit number whose second
// digit is 4).
bool IsSapphireRapids(absl::string_view model_name);

// The class of `cpus`: EMULATED for a QEMU TCG model name, VIRTUALIZED with
// the hypervisor flag, UNKNOWN without a model name, FITTED when
// `fitted_on_sapphire_rapids` and the model is one, OTHER otherwise.
v1::CpuClass ClassifyCpu(const v1::CpuInfo& cpus,
                         bool fitted_on_sapphire_rapids);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_MODELS_CPU_CLASS_H_
