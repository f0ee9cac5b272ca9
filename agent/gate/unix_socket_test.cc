#include "agent/gate/unix_socket.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

std::string TempDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string t = std::string(base ? base : "/tmp") + "/sockXXXXXX";
  return mkdtemp(t.data());
}

bool Connects(const SocketAddress& a) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa = a.sockaddr();
  const bool ok =
      connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == 0;
  close(fd);
  return ok;
}

TEST(SocketAddressTest, ShortAndLongPaths) {
  absl::StatusOr<SocketAddress> a = SocketAddress::For("/run/x/gate.sock");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bind_path(), "/run/x/gate.sock");
  EXPECT_EQ(a->grpc_target(), "unix:/run/x/gate.sock");
  EXPECT_TRUE(
      absl::IsInvalidArgument(SocketAddress::For("gate.sock").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(SocketAddress::For("").status()));

  // 107 bytes fit sun_path; 108 go through the directory's descriptor.
  std::string dir = TempDir();
  std::string deep = dir + "/" + std::string(150, 'd');
  ASSERT_EQ(mkdir(deep.c_str(), 0755), 0);
  const std::string path = deep + "/gate.sock";
  a = SocketAddress::For(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->bind_path().rfind("/proc/self/fd/", 0), 0u);
  EXPECT_EQ(a->bind_path().substr(a->bind_path().size() - 10), "/gate.sock");
  // A socket made there is reached at the long path.
  absl::StatusOr<int> fd = ListenUnix(path, 0660, std::nullopt);
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_TRUE(Connects(*a));
  close(*fd);
}

TEST(ListenUnixTest, ModeGroupStaleAndLive) {
  const std::string dir = TempDir();
  const std::string path = dir + "/gate.sock";
  absl::StatusOr<int> fd = ListenUnix(path, 0660, 65534);
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  if (geteuid() == 0) {
    EXPECT_EQ(st.st_gid, 65534u);
  }
  // Someone accepts on it: a second agent is refused.
  EXPECT_TRUE(
      absl::IsAlreadyExists(ListenUnix(path, 0660, std::nullopt).status()));
  // Closed without unlinking (a crash): replaced.
  close(*fd);
  fd = ListenUnix(path, 0600, std::nullopt);
  ASSERT_TRUE(fd.ok()) << fd.status();
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  close(*fd);
  // Not a socket: left alone.
  const std::string file = dir + "/plain";
  close(open(file.c_str(), O_CREAT | O_WRONLY, 0644));
  absl::Status s = ListenUnix(file, 0660, std::nullopt).status();
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_EQ(s.message(), file + ": exists and is not a socket");
}

TEST(PeerTest, CredentialsOfASocketPair) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  absl::StatusOr<PeerCredentials> p = PeerOf(sv[0]);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->pid, getpid());
  EXPECT_EQ(p->uid, geteuid());
  EXPECT_EQ(p->gid, getegid());
  close(sv[0]);
  close(sv[1]);
  // Not a socket.
  const int null_fd = open("/dev/null", O_RDONLY);
  EXPECT_FALSE(PeerOf(null_fd).ok());
  close(null_fd);
}

TEST(PeerAllowedTest, RootAgentUserAndGroupMembers) {
  const uid_t agent = 998;
  auto peer = [](uid_t uid, gid_t gid) {
    return PeerCredentials{100, uid, gid};
  };
  EXPECT_TRUE(PeerAllowed(peer(0, 0), agent, std::nullopt, {}));
  EXPECT_TRUE(PeerAllowed(peer(998, 5), agent, std::nullopt, {}));
  EXPECT_FALSE(PeerAllowed(peer(1000, 1000), agent, std::nullopt, {1000}));
  // Group 4242: its gid, or among the supplementary groups.
  EXPECT_TRUE(PeerAllowed(peer(1000, 4242), agent, 4242, {}));
  EXPECT_TRUE(PeerAllowed(peer(1000, 1000), agent, 4242, {27, 4242}));
  EXPECT_FALSE(PeerAllowed(peer(1000, 1000), agent, 4242, {27, 4243}));
}

TEST(GroupsTest, StatusLineAndLookups) {
  EXPECT_EQ(*ParseStatusGroups("Name:\tx\nGroups:\t4 24 27 \nNgid:\t0\n"),
            (std::vector<gid_t>{4, 24, 27}));
  EXPECT_EQ(*ParseStatusGroups("Groups:\n"), std::vector<gid_t>{});
  EXPECT_FALSE(ParseStatusGroups("Name:\tx\n").has_value());
  EXPECT_FALSE(ParseStatusGroups("Groups:\t4 x\n").has_value());
  EXPECT_EQ(*GroupId("root"), 0u);
  EXPECT_EQ(*GroupId("12345"), 12345u);
  absl::Status s = GroupId("no-such-group-here").status();
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_EQ(s.message(), "no group 'no-such-group-here'");
}

}  // namespace
}  // namespace tracehealth::agent
