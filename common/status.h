// Status helpers shared by agent and server.
//
// Abseil 20220623 has no public RETURN_IF_ERROR / ASSIGN_OR_RETURN, so the
// two macros live here. ErrnoToStatus maps an errno value to the closest
// absl::StatusCode, keeping the path and strerror text in the message.
#ifndef TRACEHEALTH_COMMON_STATUS_H_
#define TRACEHEALTH_COMMON_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth {

// Maps errno `err` to a Status whose message is "<context>: <strerror>".
// ENOENT -> NotFound, EACCES/EPERM -> PermissionDenied, EINVAL ->
// InvalidArgument, ENOSPC/EDQUOT -> ResourceExhausted, others -> Unknown. err
// == 0 -> Ok.
absl::Status ErrnoToStatus(int err, absl::string_view context);

// Returns `status` with "<context>: " prepended to its message (code kept).
absl::Status Annotate(const absl::Status& status, absl::string_view context);

}  // namespace tracehealth

#define TH_CONCAT_INNER_(a, b) a##b
#define TH_CONCAT_(a, b) TH_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define TH_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::absl::Status th_status_ = (expr);      \
    if (!th_status_.ok()) return th_status_; \
  } while (0)

// `lhs = value of rexpr` (an absl::StatusOr<T>), or returns its error.
#define TH_ASSIGN_OR_RETURN(lhs, rexpr) \
  TH_ASSIGN_OR_RETURN_IMPL_(TH_CONCAT_(th_statusor_, __LINE__), lhs, rexpr)
#define TH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                              \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()

#endif  // TRACEHEALTH_COMMON_STATUS_H_
