// What-if overrides: how a query's WhatIf changes a stored snapshot and the
// model options before the models run again.
#ifndef TRACEHEALTH_SERVER_QUERY_WHAT_IF_H_
#define TRACEHEALTH_SERVER_QUERY_WHAT_IF_H_

#include "absl/status/status.h"
#include "common/models/model_options.h"
#include "proto/tracehealth/v1/query.pb.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::server {

// True when `w` overrides anything.
bool HasOverrides(const v1::WhatIf& w);

// InvalidArgument for overrides the models cannot use (batch 0, non-finite
// or non-positive c_visit/latency budget, null_threads > threads, an
// unparsable kernel release).
absl::Status CheckWhatIf(const v1::WhatIf& w);

// Applies `w` to `snapshot` (a copy of the stored one) and `options`:
// threads -> threads.total and, unless null_threads is given, the stored
// N_null bound is cleared so the model derives it again; null_threads ->
// fgraph.null_threads_bound; preempt_mode -> kernel.preempt_mode;
// kernel_release -> kernel.release, with kernel.version and
// kernel.upstream_version cleared; fgraph_active -> fgraph.active (and the
// users list is cleared when false); batch / c_visit / latency budget ->
// `options`.
//
// A what-if release is judged as a kernel whose release string is all that
// is known (common/kernel/vendor_release.h): a mainline, stable or -rc
// release ("6.19.0") by itself, whatever the host runs (a Debian or Ubuntu
// host's upstream version no longer applies); a vendor ABI string
// ("6.12.0-1-amd64", "5.14.0-427.el9") as that vendor's kernel without an
// upstream version: rows by its numbers as if mainline, and with the
// built-in table the release counted as an input the model could not get.
// The host's architecture, build configuration (PREEMPT_DYNAMIC,
// PREEMPT_RCU, CONFIG_FPROBE) and feature-table override stay. Every path
// that re-runs a model with a what-if (PredictAttach, plans, the fleet
// scan's AttachEvaluator) changes the snapshot here and nowhere else.
void ApplyWhatIf(const v1::WhatIf& w, v1::HostSnapshot& snapshot,
                 ModelOptions& options);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_WHAT_IF_H_
