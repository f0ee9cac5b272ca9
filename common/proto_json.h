// The project's JSON form of a protobuf message: field names as in the
// .proto files (snake_case), as tracehealthctl --json, the agent's
// --format=json, its state files and the server's /api/v1 print them.
#ifndef TRACEHEALTH_COMMON_PROTO_JSON_H_
#define TRACEHEALTH_COMMON_PROTO_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace tracehealth {

struct ProtoJsonOptions {
  // Indented, one field a line (for people); otherwise one line.
  bool pretty = false;
  // Scalar fields at their default value printed too (0, "", false), so that
  // a reader of the JSON sees every field; otherwise they are left out.
  bool print_defaults = false;
};

// `message` as JSON. InternalError (protobuf's reason) when it cannot be
// printed.
absl::StatusOr<std::string> ProtoToJson(
    const google::protobuf::Message& message, ProtoJsonOptions options = {});

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_PROTO_JSON_H_
