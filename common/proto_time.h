// absl::Time and absl::Duration to and from their google.protobuf forms.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_PROTO_TIME_H_
#define TRACEHEALTH_COMMON_PROTO_TIME_H_

#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace tracehealth {

// Nanosecond precision; nanos always in [0, 1e9), also before 1970.
// Times beyond what int64 nanoseconds hold (about 1678..2262) saturate.
google::protobuf::Timestamp ToProto(absl::Time t);
absl::Time FromProto(const google::protobuf::Timestamp& ts);

// Seconds and nanos of the same sign, as google.protobuf.Duration requires.
google::protobuf::Duration ToProto(absl::Duration d);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_PROTO_TIME_H_
