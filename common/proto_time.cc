#include "common/proto_time.h"

#include "google/protobuf/util/time_util.h"

namespace tracehealth {

using google::protobuf::util::TimeUtil;

google::protobuf::Timestamp ToProto(absl::Time t) {
  return TimeUtil::NanosecondsToTimestamp(absl::ToUnixNanos(t));
}

absl::Time FromProto(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

google::protobuf::Duration ToProto(absl::Duration d) {
  return TimeUtil::NanosecondsToDuration(absl::ToInt64Nanoseconds(d));
}

}  // namespace tracehealth
