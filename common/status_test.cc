#include "common/status.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace tracehealth {
namespace {

TEST(ErrnoToStatusTest, MapsCommonErrnos) {
  EXPECT_TRUE(ErrnoToStatus(0, "x").ok());
  EXPECT_TRUE(absl::IsNotFound(ErrnoToStatus(ENOENT, "/proc/config.gz")));
  EXPECT_TRUE(absl::IsPermissionDenied(ErrnoToStatus(EACCES, "f")));
  EXPECT_TRUE(absl::IsResourceExhausted(ErrnoToStatus(ENOSPC, "f")));
  absl::Status s = ErrnoToStatus(ENOENT, "/proc/config.gz");
  EXPECT_EQ(s.message(), "/proc/config.gz: No such file or directory");
}

absl::StatusOr<int> Half(int v) {
  if (v % 2 != 0) return absl::InvalidArgumentError("odd");
  return v / 2;
}

absl::StatusOr<int> Quarter(int v) {
  TH_ASSIGN_OR_RETURN(int h, Half(v));
  TH_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

absl::Status CheckEven(int v) {
  TH_RETURN_IF_ERROR(Half(v).status());
  return absl::OkStatus();
}

TEST(MacrosTest, PropagateErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_TRUE(absl::IsInvalidArgument(Quarter(6).status()));
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_FALSE(CheckEven(5).ok());
  EXPECT_EQ(Annotate(absl::NotFoundError("b"), "a").message(), "a: b");
}

}  // namespace
}  // namespace tracehealth
