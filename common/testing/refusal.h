// ExpectRefused: the check every parser test makes of a refusal, that it is
// INVALID_ARGUMENT and says exactly `message` (the file, line or value it
// refuses and why). Failures are reported at the caller's SCOPED_TRACE.
#ifndef TRACEHEALTH_COMMON_TESTING_REFUSAL_H_
#define TRACEHEALTH_COMMON_TESTING_REFUSAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace tracehealth {

inline void ExpectRefused(const absl::Status& status,
                          absl::string_view message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(std::string(status.message()), std::string(message));
}

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_TESTING_REFUSAL_H_
