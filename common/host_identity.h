// Who a report says it comes from: the host-id and label rules that the
// agent checks before it starts and the server checks on every report, in
// one place so that an agent never starts with an identity whose every
// report would be refused.
//
// Thread safety: pure functions.
#ifndef TRACEHEALTH_COMMON_HOST_IDENTITY_H_
#define TRACEHEALTH_COMMON_HOST_IDENTITY_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace tracehealth {

inline constexpr size_t kMaxHostIdBytes = 253;  // a DNS name's limit
inline constexpr size_t kMaxLabels = 64;
inline constexpr size_t kMaxLabelKeyBytes = 63;
inline constexpr size_t kMaxLabelValueBytes = 255;

// True when `host_id` matches [A-Za-z0-9._-]{1,253} and is not made of dots
// only ("." or "..": they name no host, and read as paths wherever a host id
// ends up in one).
bool IsValidHostId(absl::string_view host_id);

// True when `key` matches [A-Za-z_][A-Za-z0-9_]* (a Prometheus label name).
// The length bound is kMaxLabelKeyBytes, checked by the caller.
bool IsValidLabelKey(absl::string_view key);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_HOST_IDENTITY_H_
