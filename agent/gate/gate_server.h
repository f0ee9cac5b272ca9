// The gate's server: a gRPC server with no listening port of its own, fed
// the connections this class accepts on the gate's unix socket
// (unix_socket.h) after checking each peer's credentials (SO_PEERCRED):
// root, the agent's user and members of the socket's group are handed to
// gRPC, anyone else's connection is closed at once.
//
// Thread safety: Start, Stop and the destructor from one owner thread;
// TakeLog from any thread. The accept loop runs on a thread of its own
// (started after the caller blocked the signals it waits for, so it
// inherits them blocked).
#ifndef TRACEHEALTH_AGENT_GATE_GATE_SERVER_H_
#define TRACEHEALTH_AGENT_GATE_GATE_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"

namespace tracehealth::agent {

struct GateServerOptions {
  std::string socket_path;
  mode_t mode = 0660;
  // The socket's group, whose members may connect (nullopt: the agent's
  // own group, and no one else).
  std::optional<gid_t> group;
};

class GateServer {
 public:
  // Listens on options.socket_path and serves `service` (not owned; it
  // must outlive the server). Errors: those of ListenUnix.
  static absl::StatusOr<std::unique_ptr<GateServer>> Start(
      const GateServerOptions& options, grpc::Service* service);
  ~GateServer();

  // Stops accepting, ends the calls in flight, removes the socket file.
  void Stop();

  // Refused peers since the last call, one line each ("gate: refused uid
  // 65534 gid 65534 pid 812 on PATH"), at most kMaxLogLines and a count of
  // the rest.
  std::vector<std::string> TakeLog() ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t refused() const ABSL_LOCKS_EXCLUDED(mu_);

  static constexpr size_t kMaxLogLines = 16;

 private:
  GateServer(GateServerOptions options, int listen_fd,
             std::unique_ptr<grpc::Server> server, int wake_read,
             int wake_write);
  void AcceptLoop();
  void Refuse(int fd, const std::string& who) ABSL_LOCKS_EXCLUDED(mu_);

  const GateServerOptions options_;
  const uid_t agent_uid_;
  int listen_fd_;
  std::unique_ptr<grpc::Server> server_;
  int wake_read_, wake_write_;
  std::thread thread_;
  bool stopped_ = false;

  mutable absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
  uint64_t unlogged_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_GATE_GATE_SERVER_H_
