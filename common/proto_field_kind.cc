#include "common/proto_field_kind.h"

namespace tracehealth {

bool IsNumberField(const google::protobuf::FieldDescriptor* f) {
  using google::protobuf::FieldDescriptor;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT:
      return true;
    default:
      return false;
  }
}

}  // namespace tracehealth
