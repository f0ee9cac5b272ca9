// The median the server's calibration summaries use (class constants, the
// accuracy view, the class curve's points).
//
// Thread safety: a pure function.
#ifndef TRACEHEALTH_SERVER_CALIBRATION_MEDIAN_H_
#define TRACEHEALTH_SERVER_CALIBRATION_MEDIAN_H_

#include <vector>

namespace tracehealth::server {

// The median of `v` (the mean of the middle two for an even count); 0 for
// none.
double Median(std::vector<double> v);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_CALIBRATION_MEDIAN_H_
