#include "common/status.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tracehealth {

absl::Status ErrnoToStatus(int err, absl::string_view context) {
  if (err == 0) return absl::OkStatus();
  std::string message = absl::StrCat(context, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EINVAL:
    case ENAMETOOLONG:
    case ELOOP:
      return absl::InvalidArgumentError(message);
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
    case EMFILE:
    case ENFILE:
      return absl::ResourceExhaustedError(message);
    case EAGAIN:
    case EINTR:
    case EBUSY:
      return absl::UnavailableError(message);
    default:
      return absl::UnknownError(message);
  }
}

absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

}  // namespace tracehealth
