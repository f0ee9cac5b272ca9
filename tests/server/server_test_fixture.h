// The fixture of the server's end-to-end tests (server_integration_test,
// server_refusals_test): the real tracehealth-server binary on loopback with
// a real SQLite file, and gRPC clients of it; Host() makes a sample host.
#ifndef TRACEHEALTH_TESTS_SERVER_SERVER_TEST_FIXTURE_H_
#define TRACEHEALTH_TESTS_SERVER_SERVER_TEST_FIXTURE_H_

#include <signal.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {

inline server::SampleHost Host(const std::string& id, uint64_t threads,
                               const std::string& role = "db") {
  server::SampleHost h;
  h.host_id = id;
  h.threads = threads;
  h.role = role;
  return h;
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    if (data_dir_.empty()) data_dir_ = NewTempDir("server");
    auto sp = StartServer(data_dir_, flags);
    ASSERT_TRUE(sp.ok()) << sp.status();
    server_ = std::move(*sp);
    channel_ = grpc::CreateChannel(server_.grpc_addr,
                                   grpc::InsecureChannelCredentials());
    ingest_ = v1::TelemetryIngest::NewStub(channel_);
    query_ = v1::FleetQuery::NewStub(channel_);
  }
  void TearDown() override {
    // Close this client's connection first: the server's drain waits (up to
    // 5 s) for open calls.
    ingest_.reset();
    query_.reset();
    channel_.reset();
    if (server_.process != nullptr && server_.process->running()) {
      ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
      auto rc = server_.process->Wait(absl::Seconds(30));
      ASSERT_TRUE(rc.ok()) << rc.status();
      EXPECT_EQ(*rc, 0);
    }
  }

  // Stops the server (SIGTERM; it must exit 0) and opens its SQLite store;
  // null (with a test failure) when that fails.
  std::unique_ptr<server::SqliteStorage> StopAndOpen() {
    ingest_.reset();
    query_.reset();
    channel_.reset();
    EXPECT_TRUE(server_.process->Signal(SIGTERM).ok());
    EXPECT_EQ(*server_.process->Wait(absl::Seconds(30)), 0);
    auto storage = server::SqliteStorage::Open(data_dir_ + "/tracehealth.db");
    EXPECT_TRUE(storage.ok()) << storage.status();
    return storage.ok() ? std::move(*storage) : nullptr;
  }

  std::string data_dir_;
  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TelemetryIngest::Stub> ingest_;
  std::unique_ptr<v1::FleetQuery::Stub> query_;
};

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_SERVER_SERVER_TEST_FIXTURE_H_
