// One-line, human-readable advice for an attach prediction.
#ifndef TRACEHEALTH_SERVER_QUERY_RECOMMENDATION_H_
#define TRACEHEALTH_SERVER_QUERY_RECOMMENDATION_H_

#include <string>

#include "proto/tracehealth/v1/predictions.pb.h"

namespace tracehealth::server {

// E.g. "do not attach on this host now: 31.4 s without yielding crosses the
// soft-lockup threshold (20 s) on a non-preemptible kernel; ...".
std::string Recommend(const v1::AttachPrediction& p);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_QUERY_RECOMMENDATION_H_
