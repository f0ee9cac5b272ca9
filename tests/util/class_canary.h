// ClassCanary: what the calibration tests send and ask over gRPC: a canary
// calibration of the class "QEMU TCG CPU version 2.5+ / 6.1" (the class of
// the preempt-voluntary-dynamic-6.1-128k fixture) and the function_graph
// prediction PredictAttach answers for a host.
//
// Thread safety: plain functions; a stub may be shared between threads.
#ifndef TRACEHEALTH_TESTS_UTIL_CLASS_CANARY_H_
#define TRACEHEALTH_TESTS_UTIL_CLASS_CANARY_H_

#include <optional>
#include <string>

#include "proto/tracehealth/v1/calibration.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"

namespace tracehealth::testing {

// A calibration of `host` on "QEMU TCG CPU version 2.5+" running
// 6.1.0-28-amd64, measured 2026-12-01T05:00:00Z.
v1::Calibration Canary(const std::string& host, double c_visit, double fixed);

// The function_graph prediction PredictAttach answers for `host`; nullopt
// when the call fails or the server does not know the host yet.
std::optional<v1::AttachPrediction> PredictFunctionGraph(
    v1::FleetQuery::Stub& stub, const std::string& host);

// `host`'s function_graph tracehealth_attach_latency_seconds in the /metrics
// text `body`; -1 when it is missing or does not parse.
double FunctionGraphLatencyOnMetrics(const std::string& body,
                                     const std::string& host);

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_UTIL_CLASS_CANARY_H_
