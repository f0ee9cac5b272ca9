#include "server/ingest/descriptor_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/util/subprocess.h"

namespace tracehealth::server {
namespace {

TEST(DescriptorGuardTest, CountsTheProcessesOpenDescriptors) {
  absl::StatusOr<int64_t> before = DescriptorGuard::CountOpen("/proc/self/fd");
  ASSERT_TRUE(before.ok()) << before.status();
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) fds.push_back(open("/dev/null", O_RDONLY));
  EXPECT_EQ(*DescriptorGuard::CountOpen("/proc/self/fd"), *before + 3);
  for (int fd : fds) close(fd);
  EXPECT_EQ(*DescriptorGuard::CountOpen("/proc/self/fd"), *before);
  EXPECT_FALSE(DescriptorGuard::CountOpen("/nonexistent/fd").ok());
}

// A directory standing for /proc/self/fd: one file per open descriptor.
class FdDir {
 public:
  FdDir() : dir_("fds") {}
  void Set(int n) {
    for (; open_ < n; ++open_) std::ofstream(Name(open_)) << "";
    for (; open_ > n; --open_) unlink(Name(open_ - 1).c_str());
  }
  const std::string& path() const { return dir_.path(); }

 private:
  std::string Name(int i) const { return absl::StrCat(dir_.path(), "/", i); }
  testing::ScopedTempDir dir_;
  int open_ = 0;
};

struct Guard {
  explicit Guard(const FdDir& dir) {
    DescriptorGuardOptions o;
    o.reserve = 5;
    o.fd_dir = dir.path();
    o.limit = [] { return uint64_t{20}; };
    o.now = [this] { return now; };
    guard = std::make_unique<DescriptorGuard>(o);
  }
  absl::Time now = absl::FromUnixSeconds(1000);
  std::unique_ptr<DescriptorGuard> guard;
};

TEST(DescriptorGuardTest, RefusesNewConnectionsAtTheLimitLessTheReserve) {
  FdDir fds;
  fds.Set(10);
  Guard g(fds);
  // New connections are admitted while count + new ones + 5 < 20: at 10,
  // 11, 12, 13, 14 in use.
  for (int i = 1; i <= 5; ++i) {
    EXPECT_TRUE(g.guard->Admit(absl::StrCat("ipv4:10.0.0.1:", i)).ok()) << i;
  }
  absl::Status refused = g.guard->Admit("ipv4:10.0.0.1:6");
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_EQ(refused.message(),
            "server near its open-file limit: 15 of 20 descriptors in use, 5 "
            "kept for the store, HTTP and queries; retry later");
  // A connection that had a stream needs no new descriptor.
  EXPECT_TRUE(g.guard->Admit("ipv4:10.0.0.1:1").ok());

  // The five connections are open (15 entries): still refused at the
  // recount 100 ms later.
  fds.Set(15);
  g.now += absl::Milliseconds(100);
  EXPECT_FALSE(g.guard->Admit("ipv4:10.0.0.1:6").ok());
  // Three close: not seen before the next recount (99 ms), then seen.
  fds.Set(12);
  g.now += absl::Milliseconds(99);
  EXPECT_FALSE(g.guard->Admit("ipv4:10.0.0.1:6").ok());
  g.now += absl::Milliseconds(1);
  EXPECT_TRUE(g.guard->Admit("ipv4:10.0.0.1:6").ok());  // 12 in use
  EXPECT_TRUE(g.guard->Admit("ipv4:10.0.0.1:7").ok());  // 13
  EXPECT_TRUE(g.guard->Admit("ipv4:10.0.0.1:8").ok());  // 14
  EXPECT_EQ(g.guard->Admit("ipv4:10.0.0.1:9").message(),
            "server near its open-file limit: 15 of 20 descriptors in use, 5 "
            "kept for the store, HTTP and queries; retry later");
}

TEST(DescriptorGuardTest, CountsOnceASecondBelowTheLimit) {
  FdDir fds;
  fds.Set(2);
  Guard g(fds);
  EXPECT_TRUE(g.guard->Admit("a").ok());  // counted: 2, then 3 with "a"
  fds.Set(14);  // e.g. HTTP connections opened meanwhile
  g.now += absl::Milliseconds(999);
  EXPECT_TRUE(g.guard->Admit("b").ok());  // 3 + 5 < 20 (no count yet)
  g.now += absl::Milliseconds(1);
  // Counted at 1 s: 14 + 5 = 19 < 20 admits "c"; then 14 + 1 + 5 = 20
  // refuses "d".
  EXPECT_TRUE(g.guard->Admit("c").ok());
  EXPECT_FALSE(g.guard->Admit("d").ok());
}

TEST(DescriptorGuardTest, ForgetsConnectionsIdleLongerThanTheServerKeepsThem) {
  FdDir fds;
  fds.Set(14);
  Guard g(fds);
  EXPECT_TRUE(g.guard->Admit("a").ok());  // 14 + 5 < 20; then 15
  EXPECT_FALSE(g.guard->Admit("b").ok());
  fds.Set(15);  // a's connection
  g.now += absl::Minutes(5) + absl::Seconds(30);
  EXPECT_TRUE(g.guard->Admit("a").ok());  // 5 min 30 s: still known
  g.now += absl::Minutes(5) + absl::Seconds(30) + absl::Milliseconds(1);
  // Past 5 min 30 s since its last stream: a new connection now, over the
  // limit (15 + 5).
  EXPECT_FALSE(g.guard->Admit("a").ok());
}

}  // namespace
}  // namespace tracehealth::server
