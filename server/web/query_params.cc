#include "server/web/query_params.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace tracehealth::server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Struct;
using google::protobuf::Value;

const FieldDescriptor* FindField(const Descriptor* d, const std::string& name) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->name() == name || f->json_name() == name) return f;
  }
  return nullptr;
}

// Sets `key` = `value` in `root`, typed by the message the path ends in.
absl::Status Put(const Descriptor* d, const std::string& key,
                 const std::string& value, Struct* root) {
  std::vector<std::string> path = absl::StrSplit(key, '.');
  Struct* at = root;
  for (size_t i = 0; i < path.size(); ++i) {
    const FieldDescriptor* f = d == nullptr ? nullptr : FindField(d, path[i]);
    if (f == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown query parameter \"", key, "\""));
    }
    Value& slot = (*at->mutable_fields())[f->name()];
    const bool leaf = i + 1 == path.size();
    const bool nested = f->type() == FieldDescriptor::TYPE_MESSAGE &&
                        !f->is_repeated() &&
                        f->message_type()->well_known_type() ==
                            Descriptor::WELLKNOWNTYPE_UNSPECIFIED;
    if (!leaf) {
      if (!nested) {
        return absl::InvalidArgumentError(absl::StrCat(
            "query parameter \"", key, "\": ", f->name(), " has no fields"));
      }
      at = slot.mutable_struct_value();
      d = f->message_type();
      continue;
    }
    Value v;
    if (f->type() == FieldDescriptor::TYPE_BOOL) {
      if (value != "true" && value != "false") {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter \"", key, "\": want true or false"));
      }
      v.set_bool_value(value == "true");
    } else {
      // Numbers, enums, strings and timestamps all parse from JSON strings.
      v.set_string_value(value);
    }
    if (f->is_repeated()) {
      *slot.mutable_list_value()->add_values() = std::move(v);
    } else {
      slot = std::move(v);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseQueryParams(
    const std::vector<std::pair<std::string, std::string>>& query,
    google::protobuf::Message* msg) {
  msg->Clear();
  if (query.empty()) return absl::OkStatus();
  Struct root;
  for (const auto& [k, v] : query) {
    absl::Status st = Put(msg->GetDescriptor(), k, v, &root);
    if (!st.ok()) return st;
  }
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(root, &json);
  auto st = google::protobuf::util::JsonStringToMessage(json, msg);
  if (!st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad query parameters: ", st.message().as_string()));
  }
  return absl::OkStatus();
}

}  // namespace tracehealth::server
