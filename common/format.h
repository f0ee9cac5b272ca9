// Numbers rendered for people: durations in reports, tables and advice, and
// the fixed-point and compact forms the models' explanations use.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_FORMAT_H_
#define TRACEHEALTH_COMMON_FORMAT_H_

#include <string>

namespace tracehealth {

// A duration in the largest unit that keeps it at or above 1 (by magnitude):
// "79.86 s", "45.3 ms", "789 us", "12 ns"; 0 is "0 ns".
std::string FormatSeconds(double seconds);

// Fixed-point rendering with `decimals` digits ("12.35"), rounding half away
// from zero, cheaper than printf-style formatting; falls back to it beyond
// 1e15 or outside 0..9 decimals.
std::string FormatFixed(double value, int decimals);

// A double in at most six significant digits ("400000", "9e-08"), as
// printf's %.6g.
std::string FormatNumber(double value);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_FORMAT_H_
