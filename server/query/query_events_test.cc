// QueryService's ListEvents (query_events.cc) on the stored events.
#include <string>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/query/query_service.h"
#include "server/query/query_service_test_fixture.h"

namespace tracehealth::server {
namespace {

TEST_F(QueryServiceTest, ListEventsGivesTheStoredEventsNewestFirst) {
  // Logged 1 h, 2 h, 3 h and 8 days ago; the last is outside the default
  // window of 7 days.
  ASSERT_TRUE(
      storage_
          ->PutEvents(
              {StoredEventRow("h1", 10, 3600, v1::EVENT_PREDICTION_YES, now_),
               StoredEventRow("h1", 11, 7200, v1::EVENT_PREDICTION_NO, now_),
               StoredEventRow("h2", 5, 10800, v1::EVENT_PREDICTION_NO, now_),
               StoredEventRow("h2", 1, 8 * 86400, v1::EVENT_PREDICTION_NO,
                              now_)})
          .ok());
  auto seqs = [](const v1::ListEventsResponse& r) {
    std::vector<uint64_t> out;
    for (const v1::StoredEvent& e : r.events()) {
      out.push_back(e.event().kmsg_seq());
    }
    return out;
  };
  v1::ListEventsRequest req;
  v1::ListEventsResponse resp;
  ASSERT_TRUE(service_->DoListEvents(req, &resp).ok());
  EXPECT_EQ(seqs(resp), (std::vector<uint64_t>{10, 11, 5}));
  EXPECT_EQ(resp.events(0).host_id(), "h1");
  EXPECT_EQ(resp.events(0).predicted(), v1::EVENT_PREDICTION_YES);
  // The misses only.
  req.set_predicted(v1::EVENT_PREDICTION_NO);
  resp.Clear();
  ASSERT_TRUE(service_->DoListEvents(req, &resp).ok());
  EXPECT_EQ(seqs(resp), (std::vector<uint64_t>{11, 5}));
  // h2 over 10 days, at most one.
  req.Clear();
  req.set_host_id("h2");
  *req.mutable_from() = google::protobuf::util::TimeUtil::SecondsToTimestamp(
      absl::ToUnixSeconds(now_) - 10 * 86400);
  req.set_limit(1);
  resp.Clear();
  ASSERT_TRUE(service_->DoListEvents(req, &resp).ok());
  EXPECT_EQ(seqs(resp), (std::vector<uint64_t>{5}));

  struct Bad {
    v1::ListEventsRequest req;
    std::string message;
  };
  std::vector<Bad> bad(3);
  *bad[0].req.mutable_from() =
      google::protobuf::util::TimeUtil::SecondsToTimestamp(
          absl::ToUnixSeconds(now_) + 1);
  bad[0].message = "from is after to";
  bad[1].req.set_limit(10001);  // 10000 is the most
  bad[1].message = "limit 10001 is over 10000";
  bad[2].req.set_predicted(static_cast<v1::EventPrediction>(9));
  bad[2].message = "unknown predicted";
  for (const Bad& b : bad) {
    v1::ListEventsResponse out;
    grpc::Status got = service_->DoListEvents(b.req, &out);
    EXPECT_EQ(got.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << b.message;
    EXPECT_EQ(got.error_message(), b.message);
  }
  req.Clear();
  req.set_limit(10000);
  resp.Clear();
  EXPECT_TRUE(service_->DoListEvents(req, &resp).ok());
}

}  // namespace
}  // namespace tracehealth::server
