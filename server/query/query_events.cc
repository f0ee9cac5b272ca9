// QueryService::DoListEvents: the stored observed kernel events, newest
// logged first, each with how it compared with its prediction.
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "server/query/query_service.h"
#include "server/query/query_util.h"

namespace tracehealth::server {
namespace {

using google::protobuf::util::TimeUtil;

constexpr uint32_t kDefaultEvents = 100;
constexpr uint32_t kMaxEvents = 10000;  // ListEvents and Accuracy

}  // namespace

grpc::Status ReadEventWindow(EventStore* store,
                             const google::protobuf::Timestamp* from,
                             const google::protobuf::Timestamp* to,
                             uint32_t limit, uint32_t default_limit,
                             absl::Time now, EventFilter f,
                             std::vector<EventRow>* rows) {
  if (limit > kMaxEvents) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("limit ", limit, " is over ", kMaxEvents));
  }
  f.to_ns = to != nullptr ? TimeUtil::TimestampToNanoseconds(*to)
                          : absl::ToUnixNanos(now);
  f.from_ns = from != nullptr
                  ? TimeUtil::TimestampToNanoseconds(*from)
                  : f.to_ns - absl::ToInt64Nanoseconds(absl::Hours(24 * 7));
  if (f.from_ns > f.to_ns) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "from is after to");
  }
  f.limit = limit == 0 ? default_limit : limit;
  if (store == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "no event store on this server");
  }
  absl::StatusOr<std::vector<EventRow>> read = store->ListEvents(f);
  if (!read.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        std::string(read.status().message()));
  }
  *rows = *std::move(read);
  return grpc::Status::OK;
}

grpc::Status QueryService::DoListEvents(const v1::ListEventsRequest& req,
                                        v1::ListEventsResponse* resp) const {
  if (!v1::EventPrediction_IsValid(req.predicted())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "unknown predicted");
  }
  EventFilter f;
  f.host_id = req.host_id();
  f.predicted = req.predicted();
  std::vector<EventRow> rows;
  grpc::Status st =
      ReadEventWindow(options_.events, req.has_from() ? &req.from() : nullptr,
                      req.has_to() ? &req.to() : nullptr, req.limit(),
                      kDefaultEvents, options_.now(), f, &rows);
  if (!st.ok()) return st;
  for (const EventRow& row : rows) {
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
