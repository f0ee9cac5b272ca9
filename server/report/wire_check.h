// CheckReportWire: one walk over the wire bytes of a tracehealth.v1.HostReport
// that decides, without parsing it, whether it decodes and whether its
// numbers are acceptable.
//
// The walk is driven by HostReport's descriptor, so every field of the
// contract is covered without a list to maintain. It is at least as strict
// as protobuf's parser: bytes it accepts always parse (a fuzz target checks
// this), which lets the server store a report and parse it only when
// someone reads it.
#ifndef TRACEHEALTH_SERVER_REPORT_WIRE_CHECK_H_
#define TRACEHEALTH_SERVER_REPORT_WIRE_CHECK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tracehealth::server {

struct WireLimits {
  // Entries of any one repeated field (packed or not) in one message.
  int max_repeated = 4096;
};

// OK; DataLoss when the bytes do not decode as a HostReport (truncated or
// malformed fields, field number 0, groups, invalid UTF-8 in a string,
// nesting deeper than 16), whatever else is wrong with them; otherwise
// InvalidArgument, naming the first such field, when a double/float is not
// finite, or negative where only >= 0 makes sense, an enum holds a value its
// type does not define (proto3 would keep it as a number), a string is
// longer than the contract's bound (kernel.cmdline: 4 KiB), or a repeated
// field has more than max_repeated entries.
absl::Status CheckReportWire(absl::string_view wire, const WireLimits& limits);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_REPORT_WIRE_CHECK_H_
