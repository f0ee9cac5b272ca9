// Replacing a file whole and atomically: write "<path>.tmp", optionally
// fsync it, rename it over `path`, optionally fsync the directory. A crash
// leaves either the old or the new content, never a mix.
//
// Thread safety: thread-safe for different paths (two writers of one path
// share its "<path>.tmp").
#ifndef TRACEHEALTH_COMMON_WRITE_FILE_H_
#define TRACEHEALTH_COMMON_WRITE_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tracehealth {

// Replaces `path` with `content` (a new file is mode 0600) atomically and,
// when `durable`, durably (fsync of the file and its directory). A
// non-durable write still never leaves a mix of old and new content, but
// after a crash the file may hold the old content (or, on some filesystems,
// be empty). Errors carry errno (common/status.h) and the path; on error no
// "<path>.tmp" is left behind.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content,
                                 bool durable = true);

}  // namespace tracehealth

#endif  // TRACEHEALTH_COMMON_WRITE_FILE_H_
