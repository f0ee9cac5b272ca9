// Renders a HostReport as readable text for `tracehealth-agent --once`: the
// kernel, threads, preemption and fgraph state first, then a table of probe
// kinds with predicted attach latency and risk, the stack depot, the vmap
// purge, and every unknown input with its reason. Text read from the host
// (release, paths, reasons, summaries that quote them) is escaped
// (common/escape.h): a host cannot forge a line or move the cursor.
//
// Pure function; thread-safe.
#ifndef TRACEHEALTH_AGENT_REPORT_REPORT_TEXT_H_
#define TRACEHEALTH_AGENT_REPORT_REPORT_TEXT_H_

#include <string>

#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::agent {

std::string RenderReportText(const v1::HostReport& report);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_REPORT_REPORT_TEXT_H_
