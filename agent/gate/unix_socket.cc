#include "agent/gate/unix_socket.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/read_file.h"
#include "common/status.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSunPathMax = sizeof(sockaddr_un::sun_path) - 1;

// Whether something accepts connections on the socket at `addr`.
bool Live(const SocketAddress& addr) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un sa = addr.sockaddr();
  const bool live =
      connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == 0;
  close(fd);
  return live;
}

// Removes a stale socket at `path`; refuses anything else.
absl::Status ClearStale(const std::string& path, const SocketAddress& addr) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoToStatus(errno, path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": exists and is not a socket"));
  }
  if (Live(addr)) {
    return absl::AlreadyExistsError(
        absl::StrCat(path, ": another process serves this socket"));
  }
  if (unlink(path.c_str()) != 0) return ErrnoToStatus(errno, path);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SocketAddress> SocketAddress::For(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "': not an absolute path"));
  }
  SocketAddress a;
  if (path.size() <= kSunPathMax) {
    a.bind_path_ = path;
    return a;
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = path.substr(slash + 1);
  a.dir_fd_ = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (a.dir_fd_ < 0) return ErrnoToStatus(errno, dir);
  a.bind_path_ = absl::StrCat("/proc/self/fd/", a.dir_fd_, "/", name);
  if (a.bind_path_.size() > kSunPathMax) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "': socket name too long"));
  }
  return a;
}

SocketAddress::SocketAddress(SocketAddress&& other) noexcept
    : bind_path_(std::move(other.bind_path_)), dir_fd_(other.dir_fd_) {
  other.dir_fd_ = -1;
}

SocketAddress& SocketAddress::operator=(SocketAddress&& other) noexcept {
  if (this != &other) {
    if (dir_fd_ >= 0) close(dir_fd_);
    bind_path_ = std::move(other.bind_path_);
    dir_fd_ = other.dir_fd_;
    other.dir_fd_ = -1;
  }
  return *this;
}

SocketAddress::~SocketAddress() {
  if (dir_fd_ >= 0) close(dir_fd_);
}

sockaddr_un SocketAddress::sockaddr() const {
  sockaddr_un sa;
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, bind_path_.data(),
         std::min(bind_path_.size(), kSunPathMax));
  return sa;
}

absl::StatusOr<int> ListenUnix(const std::string& path, mode_t mode,
                               std::optional<gid_t> gid) {
  TH_ASSIGN_OR_RETURN(SocketAddress addr, SocketAddress::For(path));
  TH_RETURN_IF_ERROR(ClearStale(path, addr));
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return ErrnoToStatus(errno, "socket(AF_UNIX)");
  auto fail = [fd, &path](int err, const char* what) {
    close(fd);
    return ErrnoToStatus(err, absl::StrCat(path, ": ", what));
  };
  sockaddr_un sa = addr.sockaddr();
  if (bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) != 0) {
    return fail(errno, "bind");
  }
  // Mode and group before listen(): until then every connect is refused.
  if (chmod(path.c_str(), mode) != 0) return fail(errno, "chmod");
  if (gid.has_value()) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return fail(errno, "stat");
    if (st.st_gid != *gid && chown(path.c_str(), -1, *gid) != 0) {
      return fail(errno, "chown to the socket group");
    }
  }
  if (listen(fd, 64) != 0) return fail(errno, "listen");
  return fd;
}

absl::StatusOr<PeerCredentials> PeerOf(int fd) {
  ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return ErrnoToStatus(errno, "SO_PEERCRED");
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

bool PeerAllowed(const PeerCredentials& peer, uid_t agent_uid,
                 std::optional<gid_t> group,
                 const std::vector<gid_t>& peer_groups) {
  if (peer.uid == 0 || peer.uid == agent_uid) return true;
  if (!group.has_value()) return false;
  if (peer.gid == *group) return true;
  return std::find(peer_groups.begin(), peer_groups.end(), *group) !=
         peer_groups.end();
}

std::optional<std::vector<gid_t>> ParseStatusGroups(const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "Groups:")) continue;
    std::vector<gid_t> out;
    for (absl::string_view g :
         absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      uint32_t v;
      if (!absl::SimpleAtoi(g, &v)) return std::nullopt;
      out.push_back(static_cast<gid_t>(v));
    }
    return out;
  }
  return std::nullopt;
}

namespace {

std::vector<gid_t> GroupsOfUser(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw;
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 ||
      found == nullptr) {
    return {};
  }
  int n = 64;
  std::vector<gid_t> groups(n);
  if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
    groups.resize(n);
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) return {};
  }
  groups.resize(n);
  return groups;
}

}  // namespace

std::vector<gid_t> GroupsOfPeer(const PeerCredentials& peer) {
  absl::StatusOr<std::string> status =
      ReadWholeFile(absl::StrCat("/proc/", peer.pid, "/status"));
  if (status.ok()) {
    std::optional<std::vector<gid_t>> groups = ParseStatusGroups(*status);
    if (groups.has_value()) return *std::move(groups);
  }
  return GroupsOfUser(peer.uid);
}

absl::StatusOr<gid_t> GroupId(const std::string& name) {
  uint32_t number;
  if (absl::SimpleAtoi(name, &number)) return static_cast<gid_t>(number);
  std::vector<char> buf(16384);
  group gr;
  group* found = nullptr;
  if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) != 0 ||
      found == nullptr) {
    return absl::NotFoundError(absl::StrCat("no group '", name, "'"));
  }
  return gr.gr_gid;
}

}  // namespace tracehealth::agent
