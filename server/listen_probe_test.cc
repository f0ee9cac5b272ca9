#include "server/listen_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

// A socket listening on 127.0.0.1, port chosen by the kernel.
int ListenOnLoopback(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

TEST(ListenProbeTest, NamesATakenPort) {
  int port = 0;
  const int fd = ListenOnLoopback(&port);
  const std::string addr = absl::StrCat("127.0.0.1:", port);
  EXPECT_EQ(ListenProbe(addr), addr + ": Address already in use");
  close(fd);
  EXPECT_EQ(ListenProbe(addr), "");
}

TEST(ListenProbeTest, FreeAndBadAddresses) {
  EXPECT_EQ(ListenProbe("127.0.0.1:0"), "");
  EXPECT_EQ(ListenProbe("7443"), "7443: not HOST:PORT");
  EXPECT_NE(ListenProbe("no-such-host.invalid:7443"), "");
  // 192.0.2.1 (TEST-NET-1) is no address of this host.
  EXPECT_EQ(ListenProbe("192.0.2.1:7443"),
            "192.0.2.1:7443: Cannot assign requested address");
}

}  // namespace
}  // namespace tracehealth::server
