#include "server/storage/labels_json.h"

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace tracehealth::server {

std::string MapToJson(const std::map<std::string, std::string>& m) {
  google::protobuf::Struct s;
  for (const auto& [k, v] : m) (*s.mutable_fields())[k].set_string_value(v);
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(s, &out);
  return out;
}

std::map<std::string, std::string> JsonToMap(const std::string& json) {
  std::map<std::string, std::string> out;
  google::protobuf::Struct s;
  if (!google::protobuf::util::JsonStringToMessage(json, &s).ok()) return out;
  for (const auto& [k, v] : s.fields()) out[k] = v.string_value();
  return out;
}

}  // namespace tracehealth::server
