// Reading a whole file with errno mapped to absl::Status (common/status.h).
#ifndef TRACEHEALTH_COMMON_READ_FILE_H_
#define TRACEHEALTH_COMMON_READ_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace tracehealth {

// The whole file. NotFound when it does not exist, PermissionDenied when it
// cannot be read; the message names `path`.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_READ_FILE_H_
