// QueryService::DoListEvents: the stored observed kernel events, newest
// logged first, each with how it compared with its prediction.
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "server/query/query_service.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr uint32_t kDefaultEvents = 100;
constexpr uint32_t kMaxEvents = 10000;

}  // namespace

grpc::Status QueryService::DoListEvents(const v1::ListEventsRequest& req,
                                        v1::ListEventsResponse* resp) const {
  if (!v1::EventPrediction_IsValid(req.predicted())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "unknown predicted");
  }
  if (req.limit() > kMaxEvents) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("limit ", req.limit(), " is over ", kMaxEvents));
  }
  EventFilter f;
  f.host_id = req.host_id();
  f.to_ns = req.has_to() ? TimeUtil::TimestampToNanoseconds(req.to())
                         : absl::ToUnixNanos(options_.now());
  f.from_ns = req.has_from()
                  ? TimeUtil::TimestampToNanoseconds(req.from())
                  : f.to_ns - absl::ToInt64Nanoseconds(absl::Hours(24 * 7));
  if (f.from_ns > f.to_ns) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "from is after to");
  }
  f.predicted = req.predicted();
  f.limit = req.limit() == 0 ? kDefaultEvents : req.limit();
  if (options_.events == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "no event store on this server");
  }
  absl::StatusOr<std::vector<EventRow>> rows = options_.events->ListEvents(f);
  if (!rows.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        std::string(rows.status().message()));
  }
  for (const EventRow& row : *rows) {
    if (!resp->add_events()->ParseFromString(row.blob)) {
      // Rows are written by this server; one that does not parse was
      // altered in the store.
      return grpc::Status(
          grpc::StatusCode::DATA_LOSS,
          absl::StrCat("stored event ", row.host_id, "/", row.boot_id, "/",
                       row.kmsg_seq, " does not parse"));
    }
  }
  return grpc::Status::OK;
}

}  // namespace tracehealth::server
