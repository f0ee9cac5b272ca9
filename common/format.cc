#include "common/format.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracehealth {

std::string FormatSeconds(double s) {
  const double a = std::fabs(s);
  if (a >= 1) return absl::StrFormat("%.2f s", s);
  if (a >= 1e-3) return absl::StrFormat("%.1f ms", s * 1e3);
  if (a >= 1e-6) return absl::StrFormat("%.0f us", s * 1e6);
  return absl::StrFormat("%.0f ns", s * 1e9);
}

std::string FormatFixed(double value, int decimals) {
  if (!(std::fabs(value) < 1e15) || decimals < 0 || decimals > 9) {
    return absl::StrFormat("%.*f", decimals < 0 ? 0 : decimals, value);
  }
  int64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const int64_t r = std::llround(std::fabs(value) * static_cast<double>(scale));
  std::string out = value < 0 && r != 0 ? "-" : "";
  absl::StrAppend(&out, r / scale);
  if (decimals > 0) {
    const std::string frac = absl::StrCat(r % scale);
    out.append(".")
        .append(static_cast<size_t>(decimals) - frac.size(), '0')
        .append(frac);
  }
  return out;
}

std::string FormatNumber(double value) {
  return absl::StrFormat("%.6g", value);
}

}  // namespace tracehealth
