#include "agent/gate/gate_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/gate/unix_socket.h"
#include "common/status.h"
#include "grpcpp/server_posix.h"

namespace tracehealth::agent {
namespace {

// A check request is a few hundred bytes; nothing larger is read.
constexpr int kMaxRequestBytes = 64 << 10;
constexpr int kMaxServerThreads = 8;

}  // namespace

absl::StatusOr<std::unique_ptr<GateServer>> GateServer::Start(
    const GateServerOptions& options, grpc::Service* service) {
  TH_ASSIGN_OR_RETURN(
      int fd, ListenUnix(options.socket_path, options.mode, options.group));
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int err = errno;
    close(fd);
    return ErrnoToStatus(err, "pipe2");
  }
  grpc::ServerBuilder builder;
  builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  grpc::ResourceQuota quota("tracehealth-gate");
  quota.SetMaxThreads(kMaxServerThreads);
  builder.SetResourceQuota(quota);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    close(fd);
    close(wake[0]);
    close(wake[1]);
    return absl::InternalError("gate: the gRPC server did not start");
  }
  std::unique_ptr<GateServer> s(
      new GateServer(options, fd, std::move(server), wake[0], wake[1]));
  s->thread_ = std::thread([raw = s.get()] { raw->AcceptLoop(); });
  return s;
}

GateServer::GateServer(GateServerOptions options, int listen_fd,
                       std::unique_ptr<grpc::Server> server, int wake_read,
                       int wake_write)
    : options_(std::move(options)),
      agent_uid_(geteuid()),
      listen_fd_(listen_fd),
      server_(std::move(server)),
      wake_read_(wake_read),
      wake_write_(wake_write) {}

GateServer::~GateServer() { Stop(); }

void GateServer::Stop() {
  if (stopped_) return;
  stopped_ = true;
  const char byte = 0;
  while (write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  unlink(options_.socket_path.c_str());
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  close(wake_read_);
  close(wake_write_);
}

void GateServer::AcceptLoop() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
  while (true) {
    const int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN) != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;  // EAGAIN, a peer gone, or out of descriptors
    absl::StatusOr<PeerCredentials> peer = PeerOf(fd);
    if (!peer.ok()) {
      Refuse(fd, std::string(peer.status().message()));
      continue;
    }
    const bool member_checked_by_gid =
        !options_.group.has_value() || peer->gid == *options_.group ||
        peer->uid == 0 || peer->uid == agent_uid_;
    const std::vector<gid_t> groups =
        member_checked_by_gid ? std::vector<gid_t>() : GroupsOfPeer(*peer);
    if (!PeerAllowed(*peer, agent_uid_, options_.group, groups)) {
      Refuse(fd, absl::StrCat("uid ", peer->uid, " gid ", peer->gid, " pid ",
                              peer->pid));
      continue;
    }
    // gRPC owns the descriptor from here.
    grpc::AddInsecureChannelFromFd(server_.get(), fd);
  }
}

void GateServer::Refuse(int fd, const std::string& who) {
  close(fd);
  absl::MutexLock lock(&mu_);
  ++refused_;
  if (log_.size() < kMaxLogLines) {
    log_.push_back(
        absl::StrCat("gate: refused ", who, " on ", options_.socket_path));
  } else {
    ++unlogged_;
  }
}

std::vector<std::string> GateServer::TakeLog() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  out.swap(log_);
  if (unlogged_ > 0) {
    out.push_back(absl::StrCat("gate: refused ", unlogged_, " more peer(s)"));
    unlogged_ = 0;
  }
  return out;
}

uint64_t GateServer::refused() const {
  absl::MutexLock lock(&mu_);
  return refused_;
}

}  // namespace tracehealth::agent
