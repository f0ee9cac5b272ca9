#include "common/grpc_code_name.h"

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(GrpcCodeNameTest, EveryCodeAndOutOfRange) {
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::CANCELLED), "CANCELLED");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNKNOWN), "UNKNOWN");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::INVALID_ARGUMENT),
               "INVALID_ARGUMENT");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::DEADLINE_EXCEEDED),
               "DEADLINE_EXCEEDED");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::NOT_FOUND), "NOT_FOUND");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::ALREADY_EXISTS),
               "ALREADY_EXISTS");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::PERMISSION_DENIED),
               "PERMISSION_DENIED");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::RESOURCE_EXHAUSTED),
               "RESOURCE_EXHAUSTED");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::FAILED_PRECONDITION),
               "FAILED_PRECONDITION");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::ABORTED), "ABORTED");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::OUT_OF_RANGE), "OUT_OF_RANGE");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNIMPLEMENTED), "UNIMPLEMENTED");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::INTERNAL), "INTERNAL");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNAVAILABLE), "UNAVAILABLE");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::DATA_LOSS), "DATA_LOSS");
  EXPECT_STREQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED),
               "UNAUTHENTICATED");
  EXPECT_STREQ(GrpcCodeName(static_cast<grpc::StatusCode>(17)), "UNKNOWN");
  EXPECT_STREQ(GrpcCodeName(static_cast<grpc::StatusCode>(-1)), "UNKNOWN");
}

}  // namespace
}  // namespace tracehealth
