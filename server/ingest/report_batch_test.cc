#include "server/ingest/report_batch.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.pb.h"

namespace tracehealth::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::HostReport Report(const std::string& host, uint64_t seq) {
  v1::HostReport r;
  r.set_host_id(host);
  r.set_seq(seq);
  return r;
}

TEST(ReportBatchTest, ReportsInOrderAsTheirOwnBytes) {
  v1::ReportBatch batch;
  *batch.add_reports() = Report("h1", 7);
  *batch.add_reports() = Report("h1", 8);
  const std::string wire = batch.SerializeAsString();
  absl::StatusOr<std::vector<absl::string_view>> got = SplitReportBatch(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(*got, ElementsAre(Report("h1", 7).SerializeAsString(),
                                Report("h1", 8).SerializeAsString()));
}

TEST(ReportBatchTest, EmptyBatchHasNoReports) {
  absl::StatusOr<std::vector<absl::string_view>> got = SplitReportBatch("");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
}

TEST(ReportBatchTest, AtMostTheLimit) {
  v1::ReportBatch batch;
  for (size_t i = 0; i < kMaxBatchReports; ++i) {
    *batch.add_reports() = Report("h", i + 1);
  }
  absl::StatusOr<std::vector<absl::string_view>> got =
      SplitReportBatch(batch.SerializeAsString());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), kMaxBatchReports);
  *batch.add_reports() = Report("h", kMaxBatchReports + 1);
  got = SplitReportBatch(batch.SerializeAsString());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(),
              HasSubstr("more than 256 reports in one batch"));
}

TEST(ReportBatchTest, OtherFieldsAndBadBytesAreRefused) {
  // Field 2, varint: not a report.
  absl::StatusOr<std::vector<absl::string_view>> got =
      SplitReportBatch(std::string("\x10\x01", 2));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("field 2 of wire type 0"));
  // Field 1 as a varint.
  got = SplitReportBatch(std::string("\x08\x01", 2));
  EXPECT_THAT(got.status().message(), HasSubstr("field 1 of wire type 0"));
  // A report whose length runs past the end.
  got = SplitReportBatch(std::string("\x0a\x05\x01\x02", 4));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("malformed"));
}

}  // namespace
}  // namespace tracehealth::server
