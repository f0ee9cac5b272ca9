#include "common/grpc_code_name.h"

namespace tracehealth {

const char* GrpcCodeName(grpc::StatusCode code) {
  // In code order: grpc::StatusCode numbers them 0..16.
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i < static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))
             ? kNames[i]
             : "UNKNOWN";
}

}  // namespace tracehealth
