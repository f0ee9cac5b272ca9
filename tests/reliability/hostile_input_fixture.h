// The fixture of the hostile-input tests (hostile_*_test.cc): the real
// tracehealth-server binary over loopback gRPC, an attacker's channel, and a
// bystander host that streams in parallel on its own connection and must
// keep being served; helpers that check a refusal and count what was stored.
#ifndef TRACEHEALTH_TESTS_RELIABILITY_HOSTILE_INPUT_FIXTURE_H_
#define TRACEHEALTH_TESTS_RELIABILITY_HOSTILE_INPUT_FIXTURE_H_

#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {

inline constexpr int kInvalidArgument =
    static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT);

inline v1::HostReport Report(const std::string& host_id, uint64_t seq,
                             absl::Time at = absl::Now()) {
  server::SampleHost host = server::FleetHost(3);
  host.host_id = host_id;
  return server::SampleReport(host, seq, at);
}

class HostileInputTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags = {},
             std::shared_ptr<grpc::ChannelCredentials> creds = nullptr,
             const grpc::ChannelArguments& args = {}) {
    data_dir_ = NewTempDir("hostile");
    auto sp = StartServer(data_dir_, flags);
    ASSERT_TRUE(sp.ok()) << sp.status();
    server_ = std::move(*sp);
    if (creds == nullptr) creds = grpc::InsecureChannelCredentials();
    channel_ = grpc::CreateCustomChannel(server_.grpc_addr, creds, args);
    ingest_ = v1::TelemetryIngest::NewStub(channel_);
    query_ = v1::FleetQuery::NewStub(channel_);
    // The bystander has its own connection: a broken attacker connection
    // must not matter to it.
    grpc::ChannelArguments own = args;
    own.SetInt("tracehealth.bystander", 1);
    bystander_ = std::make_unique<Bystander>(
        grpc::CreateCustomChannel(server_.grpc_addr, creds, own), "bystander");
    ASSERT_TRUE(bystander_->WaitProgress(5)) << "bystander not served at start";
  }

  // The bystander was served during the attack and ends cleanly.
  void ExpectBystanderServed() {
    ASSERT_TRUE(bystander_->WaitProgress(5))
        << "bystander not served after the attack";
    grpc::Status st = bystander_->Stop();
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(bystander_->acked(), bystander_->sent());
    EXPECT_LT(bystander_->max_ack_latency(), absl::Seconds(5));
    std::printf(
        "bystander: %llu reports sent, %llu acked, max ack latency %s\n",
        static_cast<unsigned long long>(bystander_->sent()),
        static_cast<unsigned long long>(bystander_->acked()),
        absl::FormatDuration(bystander_->max_ack_latency()).c_str());
  }

  void TearDown() override {
    if (bystander_ != nullptr) bystander_->Stop();
    if (server_.process != nullptr && server_.process->running()) {
      ASSERT_TRUE(server_.process->Signal(SIGTERM).ok());
      auto rc = server_.process->Wait(absl::Seconds(30));
      ASSERT_TRUE(rc.ok()) << rc.status();
      EXPECT_EQ(*rc, 0);
    }
  }

  // Number of stored reports of `host_id` (0 when the host is unknown).
  uint64_t StoredReports(const std::string& host_id,
                         grpc::ClientContext* ctx = nullptr) {
    grpc::ClientContext own;
    v1::GetHostRequest req;
    req.set_host_id(host_id);
    v1::HostState st;
    grpc::Status s = query_->GetHost(ctx != nullptr ? ctx : &own, req, &st);
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) return 0;
    EXPECT_TRUE(s.ok()) << s.error_message();
    return st.reports();
  }

  // Sends `bad` (and one good report after it) on a fresh stream of
  // `host_id`: the bad one must come back as a Rejection with
  // INVALID_ARGUMENT and the stream must go on.
  void ExpectRejected(const std::string& host_id, const v1::HostReport& bad,
                      absl::string_view why) {
    SCOPED_TRACE(std::string(why));
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(bad));
    ASSERT_TRUE(s.WaitRejections(1)) << "no rejection";
    std::vector<v1::Rejection> rej = s.rejections();
    ASSERT_EQ(rej.size(), 1u);
    EXPECT_EQ(rej[0].code(), kInvalidArgument) << rej[0].message();
    EXPECT_FALSE(rej[0].message().empty());
    if (!host_id.empty()) {
      const uint64_t next = StoredReports(host_id) + 100;
      ASSERT_TRUE(s.Send(Report(host_id, next)));
      EXPECT_TRUE(s.WaitAcked(next))
          << "stream did not continue after the rejection";
    }
    grpc::Status st = s.Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
  }

  std::string data_dir_;
  ServerProcess server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TelemetryIngest::Stub> ingest_;
  std::unique_ptr<v1::FleetQuery::Stub> query_;
  std::unique_ptr<Bystander> bystander_;
};

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_TESTS_RELIABILITY_HOSTILE_INPUT_FIXTURE_H_
