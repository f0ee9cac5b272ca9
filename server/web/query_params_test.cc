#include "server/web/query_params.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/query.pb.h"

namespace tracehealth::server {
namespace {

TEST(QueryParamsTest, FieldsByProtoOrJsonNameWithTheirTypes) {
  v1::ListHostsRequest req;
  absl::Status st = ParseQueryParams({{"hosts.labels", "role=db,zone=~us-.*"},
                                      {"minRisk", "RISK_WARNING"},
                                      {"sort", "HOST_SORT_MARGIN"},
                                      {"limit", "50"},
                                      {"offset", "100"},
                                      {"stale", "false"},
                                      {"reverse", "true"},
                                      {"kernel_prefix", "6.1"}},
                                     &req);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(req.hosts().labels(), "role=db,zone=~us-.*");
  EXPECT_EQ(req.min_risk(), v1::RISK_WARNING);
  EXPECT_EQ(req.sort(), v1::HOST_SORT_MARGIN);
  EXPECT_EQ(req.limit(), 50u);
  EXPECT_EQ(req.offset(), 100u);
  ASSERT_TRUE(req.has_stale());
  EXPECT_FALSE(req.stale());
  EXPECT_TRUE(req.reverse());
  EXPECT_EQ(req.kernel_prefix(), "6.1");
}

TEST(QueryParamsTest, RepeatedFieldsTimestampsAndNestedMessages) {
  v1::PredictAttachRequest req;
  ASSERT_TRUE(ParseQueryParams({{"hosts.host_ids", "a"},
                                {"hosts.hostIds", "b"},
                                {"what_if.threads", "400000"},
                                {"what_if.preempt_mode", "PREEMPT_MODE_NONE"}},
                               &req)
                  .ok());
  ASSERT_EQ(req.hosts().host_ids_size(), 2);
  EXPECT_EQ(req.hosts().host_ids(1), "b");
  EXPECT_EQ(req.what_if().threads(), 400000u);
  EXPECT_EQ(req.what_if().preempt_mode(), v1::PREEMPT_MODE_NONE);

  v1::GetHostHistoryRequest h;
  ASSERT_TRUE(ParseQueryParams({{"from", "2027-01-15T08:00:00Z"}}, &h).ok());
  // 2027-01-15 is day 20833 of the epoch: 20833 * 86400 + 8 * 3600.
  EXPECT_EQ(h.from().seconds(), 1800000000);
}

TEST(QueryParamsTest, RejectionsNameTheParameter) {
  struct Case {
    std::pair<std::string, std::string> param;
    std::string reason;
  } cases[] = {
      {{"nope", "1"}, "unknown query parameter \"nope\""},
      {{"hosts.nope", "1"}, "unknown query parameter \"hosts.nope\""},
      {{"limit.x", "1"}, "query parameter \"limit.x\": limit has no fields"},
      {{"stale", "yes"}, "query parameter \"stale\": want true or false"},
      {{"limit", "many"}, "bad query parameters"},
      {{"min_risk", "RISK_HUGE"}, "bad query parameters"},
  };
  for (const Case& c : cases) {
    v1::ListHostsRequest req;
    absl::Status st = ParseQueryParams({c.param}, &req);
    EXPECT_TRUE(absl::IsInvalidArgument(st)) << c.param.first;
    EXPECT_TRUE(absl::StrContains(st.message(), c.reason)) << st;
  }
}

}  // namespace
}  // namespace tracehealth::server
