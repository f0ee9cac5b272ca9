// Query-string arguments as a protobuf request message: each key is a field
// path in proto or JSON names ("hosts.labels", "min_risk", "minRisk"), each
// value the field's protobuf JSON text without quotes (numbers, enum names,
// RFC 3339 timestamps, true/false); a repeated field takes every value of
// its key ("hosts.host_ids=a&hosts.host_ids=b").
#ifndef TRACEHEALTH_SERVER_WEB_QUERY_PARAMS_H_
#define TRACEHEALTH_SERVER_WEB_QUERY_PARAMS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace tracehealth::server {

// Fills `msg` (cleared first) from `query`. InvalidArgument naming the
// parameter: an unknown field, a path through a non-message field, a bad
// value (the protobuf JSON parser's reason).
absl::Status ParseQueryParams(
    const std::vector<std::pair<std::string, std::string>>& query,
    google::protobuf::Message* msg);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_WEB_QUERY_PARAMS_H_
