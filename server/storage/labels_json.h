// Alert labels and annotations as stored by every backend: a JSON object of
// strings (protobuf's JSON printer, so keys come out sorted).
#ifndef TRACEHEALTH_SERVER_STORAGE_LABELS_JSON_H_
#define TRACEHEALTH_SERVER_STORAGE_LABELS_JSON_H_

#include <map>
#include <string>

namespace tracehealth::server {

std::string MapToJson(const std::map<std::string, std::string>& m);
// An empty map for text that is not such an object.
std::map<std::string, std::string> JsonToMap(const std::string& json);

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_STORAGE_LABELS_JSON_H_
