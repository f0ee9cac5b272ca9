// The name of a gRPC status code as gRPC spells it ("INVALID_ARGUMENT"), for
// logs and metric labels.
//
// Thread safety: a pure function.
#ifndef TRACEHEALTH_COMMON_GRPC_CODE_NAME_H_
#define TRACEHEALTH_COMMON_GRPC_CODE_NAME_H_

#include "grpcpp/support/status.h"

namespace tracehealth {

// "OK" .. "UNAUTHENTICATED"; "UNKNOWN" for a value outside the 17 codes.
const char* GrpcCodeName(grpc::StatusCode code);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_GRPC_CODE_NAME_H_
