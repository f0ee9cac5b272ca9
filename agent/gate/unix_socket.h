// The gate's unix socket: its address (also for paths longer than
// sun_path), the listening socket with its mode and group, and who may
// connect (SO_PEERCRED).
//
// The file mode (0660 and the group) keeps other users from connecting at
// all; the server checks every accepted peer again, since a socket's mode
// can be changed by whoever owns its directory, and a refused peer's
// connection is closed before gRPC sees a byte.
//
// Thread safety: functions of their arguments; SocketAddress is a value
// that owns a directory descriptor.
#ifndef TRACEHEALTH_AGENT_GATE_UNIX_SOCKET_H_
#define TRACEHEALTH_AGENT_GATE_UNIX_SOCKET_H_

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tracehealth::agent {

// A unix socket path as bind(2) and connect(2) take it. A path that does
// not fit sun_path (107 bytes) is reached through its directory:
// "/proc/self/fd/N/NAME", with N a descriptor of the directory this object
// holds open (in this process only).
class SocketAddress {
 public:
  // InvalidArgument for an empty or relative path, or a name (last
  // component) too long by itself; the errors of open(2) on the directory.
  static absl::StatusOr<SocketAddress> For(const std::string& path);

  SocketAddress(SocketAddress&& other) noexcept;
  SocketAddress& operator=(SocketAddress&& other) noexcept;
  SocketAddress(const SocketAddress&) = delete;
  SocketAddress& operator=(const SocketAddress&) = delete;
  ~SocketAddress();

  // What bind/connect use, and gRPC's "unix:" form of it.
  const std::string& bind_path() const { return bind_path_; }
  std::string grpc_target() const { return "unix:" + bind_path_; }
  sockaddr_un sockaddr() const;

 private:
  SocketAddress() = default;
  std::string bind_path_;
  int dir_fd_ = -1;
};

// Creates the listening socket at `path` (close-on-exec, non-blocking),
// mode `mode` and, when given, group `gid`. A stale socket file there (one
// nobody accepts on) is replaced; a live one is AlreadyExists, and a path
// that is not a socket is FailedPrecondition. The mode and group are set
// before listen(2), so no connection is accepted before they hold.
absl::StatusOr<int> ListenUnix(const std::string& path, mode_t mode,
                               std::optional<gid_t> gid);

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// SO_PEERCRED of a connected unix socket.
absl::StatusOr<PeerCredentials> PeerOf(int fd);

// Who may use the gate: root, the agent's own user, and the group's members
// (the peer's gid, or `peer_groups`: its user's supplementary groups).
bool PeerAllowed(const PeerCredentials& peer, uid_t agent_uid,
                 std::optional<gid_t> group,
                 const std::vector<gid_t>& peer_groups);

// The supplementary groups of `peer`: the "Groups:" line of
// /proc/PID/status (the process's own credentials, as the kernel checked
// them against the socket's mode), else its user's groups in the group
// database (getgrouplist); empty when neither is known.
std::vector<gid_t> GroupsOfPeer(const PeerCredentials& peer);

// The "Groups:" line of a /proc/PID/status text; nullopt without one.
std::optional<std::vector<gid_t>> ParseStatusGroups(const std::string& text);

// The gid of group `name` (a number is taken as the gid itself).
// NotFound for an unknown group.
absl::StatusOr<gid_t> GroupId(const std::string& name);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_GATE_UNIX_SOCKET_H_
