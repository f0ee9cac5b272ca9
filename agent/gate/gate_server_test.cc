#include "agent/gate/gate_server.h"

#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "agent/gate/gate_service.h"
#include "agent/gate/unix_socket.h"
#include "agent/testing/test_tree.h"
#include "common/procfs/host_fs.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/gate.grpc.pb.h"

namespace tracehealth::agent {
namespace {

constexpr uid_t kNobody = 65534;
constexpr uid_t kStranger = 12345;  // no passwd entry

// What a peer saw when it connected.
enum Outcome {
  kServerSpoke = 0,    // accepted: gRPC sent its HTTP/2 SETTINGS first
  kClosed = 1,         // the server closed the connection at once
  kConnectDenied = 2,  // connect(2): EACCES (the socket's mode)
  kOther = 3,
};

// Connects to `path` from a child process running as uid/gid with no
// supplementary groups. Only async-signal-safe calls after fork().
Outcome ConnectAs(const std::string& path, uid_t uid, gid_t gid) {
  sockaddr_un sa = {};
  sa.sun_family = AF_UNIX;
  path.copy(sa.sun_path, sizeof(sa.sun_path) - 1);
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(gid, gid, gid) != 0 ||
        setresuid(uid, uid, uid) != 0) {
      _exit(kOther);
    }
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) != 0) {
      _exit(errno == EACCES ? kConnectDenied : kOther);
    }
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, 5000) != 1) _exit(kOther);
    char buf[64];
    const ssize_t n = read(fd, buf, sizeof(buf));
    _exit(n > 0 ? kServerSpoke : kClosed);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? static_cast<Outcome>(WEXITSTATUS(status)) : kOther;
}

class GateServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A directory every user may traverse (TEST_TMPDIR may not be).
    char dir[] = "/tmp/gate-test-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(chmod(dir, 0755), 0);
    path_ = dir_ + "/gate.sock";
    tree_.Write("/proc/loadavg", "0.10 0.20 0.30 41/240000 9999\n");
    tree_.Write("/proc/stat", "processes 1953211\n");
    tree_.Write("/proc/uptime", "84240.00 1.00\n");
    tree_.Write("/sys/kernel/tracing/current_tracer", "nop\n");
    fs_ = std::make_unique<HostFs>(tree_.root());
    GateServiceOptions o;
    o.answered_by = "agent unix:" + path_;
    service_ = std::make_unique<GateService>(fs_.get(), o);
  }
  void TearDown() override {
    server_.reset();
    rmdir(dir_.c_str());
  }
  void StartServer(std::optional<gid_t> group = std::nullopt) {
    GateServerOptions o;
    o.socket_path = path_;
    o.group = group;
    absl::StatusOr<std::unique_ptr<GateServer>> s =
        GateServer::Start(o, service_.get());
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
  }
  // The last cycle saw 100 threads; the host has 240,000 now.
  void PublishCycle() {
    v1::HostSnapshot s;
    s.mutable_kernel()->set_release("6.16.0");
    s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
    s.mutable_threads()->set_total(100);
    s.mutable_fgraph()->set_tracefs_path("/sys/kernel/tracing");
    s.mutable_fgraph()->set_active(false);
    service_->Publish(s);
  }
  grpc::Status Check(const v1::CheckRequest& r, v1::CheckResponse* out) {
    auto stub = v1::Gate::NewStub(grpc::CreateChannel(
        "unix:" + path_, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    return stub->Check(&ctx, r, out);
  }
  static v1::CheckRequest Request() {
    v1::CheckRequest r;
    r.set_probe_kind(v1::PROBE_KIND_FUNCTION_GRAPH_TRACER);
    r.set_functions(2000);
    r.mutable_max_latency()->set_seconds(2);
    return r;
  }

  std::string dir_, path_;
  TestTree tree_;
  std::unique_ptr<HostFs> fs_;
  std::unique_ptr<GateService> service_;
  std::unique_ptr<GateServer> server_;
};

TEST_F(GateServerTest, UnavailableBeforeTheFirstCycle) {
  StartServer();
  v1::CheckResponse out;
  grpc::Status st = Check(Request(), &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(st.error_message(),
            "the agent has not finished its first collection cycle yet");
}

TEST_F(GateServerTest, AnswersFromAFreshReadNotTheCycle) {
  StartServer();
  PublishCycle();
  v1::CheckResponse out;
  grpc::Status st = Check(Request(), &out);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(out.verdict(), v1::ATTACH_VERDICT_STALL_RISK);
  EXPECT_EQ(out.reason(),
            "unsafe: function_graph attach walks 240000 threads: 79.86 s > "
            "2.00 s budget; soft lockup (PREEMPT_NONE, 3.99x the 20.00 s "
            "threshold)");
  EXPECT_EQ(out.answered_by(), "agent unix:" + path_);
  EXPECT_TRUE(out.has_snapshot_at());
  EXPECT_GT(out.mitigations_size(), 0);
  // The host drops to 412 threads: the next check sees it.
  tree_.Write("/proc/loadavg", "0.10 0.20 0.30 1/412 9999\n");
  ASSERT_TRUE(Check(Request(), &out).ok());
  EXPECT_EQ(out.verdict(), v1::ATTACH_VERDICT_SAFE);
  EXPECT_EQ(out.prediction().threads_total(), 412u);
  EXPECT_EQ(out.mitigations_size(), 0);
}

TEST_F(GateServerTest, MalformedRequestsNameTheField) {
  StartServer();
  PublishCycle();
  v1::CheckResponse out;
  v1::CheckRequest r = Request();
  r.set_probe_kind(v1::PROBE_KIND_UNSPECIFIED);
  grpc::Status st = Check(r, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StartsWith(st.error_message(), "probe_kind: required"))
      << st.error_message();
  r = Request();
  r.set_functions(0);
  st = Check(r, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "functions: must be at least 1");
  r = Request();
  r.clear_max_latency();
  st = Check(r, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "max_latency: required");
}

TEST_F(GateServerTest, OtherUsersAreRefused) {
  ASSERT_EQ(geteuid(), 0u) << "needs root to act as other users";
  StartServer();
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  // Root is served; nobody cannot even connect (mode 0660, group root).
  EXPECT_EQ(ConnectAs(path_, 0, 0), kServerSpoke);
  EXPECT_EQ(ConnectAs(path_, kNobody, kNobody), kConnectDenied);
  // With the mode opened up, the server's own check refuses them.
  ASSERT_EQ(chmod(path_.c_str(), 0666), 0);
  EXPECT_EQ(ConnectAs(path_, kNobody, kNobody), kClosed);
  EXPECT_EQ(ConnectAs(path_, kStranger, kStranger), kClosed);
  EXPECT_EQ(server_->refused(), 2u);
  std::vector<std::string> log = server_->TakeLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_TRUE(
      absl::StartsWith(log[0], "gate: refused uid 65534 gid 65534 pid "))
      << log[0];
  EXPECT_TRUE(absl::EndsWith(log[0], " on " + path_)) << log[0];
  EXPECT_TRUE(server_->TakeLog().empty());
}

TEST_F(GateServerTest, MembersOfTheGroupAreServed) {
  ASSERT_EQ(geteuid(), 0u) << "needs root to act as other users";
  StartServer(kNobody);  // group 65534
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, kNobody);
  // gid 65534 passes the mode and the server's check; another gid passes
  // neither.
  EXPECT_EQ(ConnectAs(path_, kStranger, kNobody), kServerSpoke);
  EXPECT_EQ(ConnectAs(path_, kStranger, kStranger), kConnectDenied);
  ASSERT_EQ(chmod(path_.c_str(), 0666), 0);
  EXPECT_EQ(ConnectAs(path_, kStranger, kStranger), kClosed);
}

TEST_F(GateServerTest, StopRemovesTheSocket) {
  StartServer();
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  server_->Stop();
  EXPECT_NE(stat(path_.c_str(), &st), 0);
  // A second start on the same path works.
  StartServer();
  EXPECT_EQ(stat(path_.c_str(), &st), 0);
}

}  // namespace
}  // namespace tracehealth::agent
