// Writes to tracefs control files under an injected root: the one place the
// agent changes its host, used only by calibration (calibrator.h) and by the
// restore of an interrupted calibration (journal.h). On a fixture tree
// (--root=DIR) the writes just replace the files' contents.
//
// Thread safety: functions of the filesystem; callers serialise writes to
// one file.
#ifndef TRACEHEALTH_AGENT_CALIBRATE_TRACEFS_WRITE_H_
#define TRACEHEALTH_AGENT_CALIBRATE_TRACEFS_WRITE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

// ROOT + host path `path` (absolute, no ".." component), or InvalidArgument.
absl::StatusOr<std::string> RootedPath(absl::string_view root,
                                       absl::string_view path);

// Opens `path` (a host path under `root`) write-only with O_TRUNC (which
// clears set_ftrace_filter) and writes `content` in one write(2) when it
// is not empty. Errors name the path and the errno (tracefs answers a
// function it does not know with EINVAL).
absl::Status WriteTracefsFile(absl::string_view root, absl::string_view path,
                              absl::string_view content);

// OK when `path` under `root` may be opened for writing (access(2) W_OK);
// otherwise the errno as a status naming the path.
absl::Status CheckWritable(absl::string_view root, absl::string_view path);

// Whether the mount table `mounts` (/proc/mounts) has `mount_point`
// mounted read-only ("ro" among its options).
bool MountedReadOnly(absl::string_view mounts, absl::string_view mount_point);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_CALIBRATE_TRACEFS_WRITE_H_
