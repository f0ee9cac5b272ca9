#include "common/proto_json.h"

#include "absl/status/status.h"
#include "google/protobuf/util/json_util.h"

namespace tracehealth {

absl::StatusOr<std::string> ProtoToJson(
    const google::protobuf::Message& message, ProtoJsonOptions options) {
  google::protobuf::util::JsonPrintOptions opts;
  opts.preserve_proto_field_names = true;
  opts.add_whitespace = options.pretty;
  opts.always_print_primitive_fields = options.print_defaults;
  std::string json;
  auto status =
      google::protobuf::util::MessageToJsonString(message, &json, opts);
  if (!status.ok()) return absl::InternalError(status.ToString());
  return json;
}

}  // namespace tracehealth
