// What kind of value a protobuf field holds, for code that walks messages
// by their descriptors (the report scan, alert conditions).
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_PROTO_FIELD_KIND_H_
#define TRACEHEALTH_COMMON_PROTO_FIELD_KIND_H_

#include "google/protobuf/descriptor.h"

namespace tracehealth {

// An integer or floating-point field (not bool, enum, string or message).
bool IsNumberField(const google::protobuf::FieldDescriptor* f);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_PROTO_FIELD_KIND_H_
