// The kernel-log part of `tracehealth-agent --once`'s readable report: how
// the log was read (records, skipped, lost, or why not) and each observed
// event with its time, what it was, the model it is attributed to and its
// first frames.
//
// Pure function; thread-safe.
#ifndef TRACEHEALTH_AGENT_REPORT_EVENTS_TEXT_H_
#define TRACEHEALTH_AGENT_REPORT_EVENTS_TEXT_H_

#include <string>

#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

// Appends the section to `out`; nothing when the report has no kmsg health
// (the log was not read).
void AppendKernelLog(const v1::HostReport& report, std::string* out);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_REPORT_EVENTS_TEXT_H_
