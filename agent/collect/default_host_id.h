// The identity an agent reports under when --host_id is not given.
//
// The hostname comes first (/proc/sys/kernel/hostname under the root, else
// gethostname()). A hostname that is no valid host id (common/host_identity.h)
// is common: "(none)" on initramfs, some guests and containers. A one-shot
// report is only printed, so it shows such a hostname as it is. A report
// that leaves the process (streamed, spooled, given a seq) needs a valid id:
// then the id is derived from /etc/machine-id under the root, and without a
// usable machine id the agent stops with a message naming --host_id.
//
// The derived id is not the machine id itself, which is not to be shown on
// the network (machine-id(5)): it is systemd's application-specific id for
// tracehealth, the first 128 bits of HMAC-SHA256 keyed by the machine id
// over kTracehealthAppId, made a version-4 UUID, in 32 lower-case hex digits;
// `systemd-id128 machine-id --app-specific=fe107386b6e54873b921257ea367a540`
// prints the same on the host.
//
// Thread safety: functions of the files under `fs`.
#ifndef TRACEHEALTH_AGENT_COLLECT_DEFAULT_HOST_ID_H_
#define TRACEHEALTH_AGENT_COLLECT_DEFAULT_HOST_ID_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/procfs/host_fs.h"

namespace tracehealth::agent {

// tracehealth's application id for machine-id derived host ids.
inline constexpr char kTracehealthAppId[] = "fe107386b6e54873b921257ea367a540";

// The id derived from the content of an /etc/machine-id file (32 hex digits,
// optionally followed by a newline). InvalidArgument for anything else,
// including "uninitialized" and the all-zero id, saying what it is ("not 32
// hexadecimal digits", "all zero").
absl::StatusOr<std::string> HostIdFromMachineId(absl::string_view machine_id);

// The host's name: /proc/sys/kernel/hostname under the root (without its
// newline), else gethostname(); "" when neither answers.
std::string ReadHostname(const HostFs& fs);

struct DefaultHostId {
  std::string host_id;
  // Where it came from: "hostname" or "/etc/machine-id".
  std::string source;
};

// The host id when --host_id is not given. `need_valid_id`: the reports
// leave the process (anything but --once). Errors: InvalidArgument with the
// message the agent prints (naming the hostname, why /etc/machine-id did not
// help, and --host_id) when a valid id is needed and there is none.
absl::StatusOr<DefaultHostId> ResolveDefaultHostId(const HostFs& fs,
                                                   bool need_valid_id);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_DEFAULT_HOST_ID_H_
