// An agent with an operator's feature-table override (--feature_table) on a
// fixture host, reporting through the real tracehealth-server: the server
// explains the host's predictions, and answers what-if queries for it, with
// the override's rows (which the report carries), not the built-in ones.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

// A vendor 6.12 kernel that has the KASAN flush combining (built in: from
// 6.13 and 6.12.6) and fprobe on fgraph (built in: from 6.14).
constexpr char kVendorRows[] =
    "features:\n"
    "  kasan_flush_combined:\n"
    "    description: vendor backport\n"
    "    since: \"6.12\"\n"
    "  fprobe_on_fgraph:\n"
    "    description: vendor backport\n"
    "    since: \"6.12\"\n";
// sha256sum of kVendorRows.
constexpr char kVendorDigest[] =
    "sha256:0cb7d2c8333359b755ff0edcd89f22754309421a42fc5f26d8f3a06799e4e3a7";

class FeatureTableOverrideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string data_dir = NewTempDir("server-data-");
    absl::StatusOr<ServerProcess> server = StartServer(data_dir);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    const std::string dir = NewTempDir("agent-");
    ASSERT_TRUE(WriteFile(dir + "/vendor.yaml", kVendorRows).ok());
    // kasan-6.12-256cpu: release 6.12.3, 256 CPUs, 2,804 pending areas owning
    // a shadow page, 61,000 threads, fgraph never active, PREEMPT_NONE.
    auto agent = Subprocess::Start(
        {Runfile("agent/tracehealth-agent"),
         "--root=" + Runfile("tests/fixtures/hosts/kasan-6.12-256cpu"),
         "--state_dir=" + dir + "/state", "--host_id=vendor-1",
         "--server=" + server_.grpc_addr, "--interval=100ms", "--max_reports=2",
         "--feature_table=" + dir + "/vendor.yaml",
         "--shutdown_flush_timeout=30s"},
        dir + "/agent.log");
    ASSERT_TRUE(agent.ok()) << agent.status();
    absl::StatusOr<int> rc = (*agent)->Wait(absl::Seconds(60));
    ASSERT_TRUE(rc.ok()) << rc.status();
    ASSERT_EQ(*rc, 0) << *ReadFile(dir + "/agent.log");
    stub_ = v1::FleetQuery::NewStub(grpc::CreateChannel(
        server_.grpc_addr, grpc::InsecureChannelCredentials()));
  }

  void Prepare(grpc::ClientContext* ctx) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(20));
  }

  ServerProcess server_;
  std::unique_ptr<v1::FleetQuery::Stub> stub_;
};

TEST_F(FeatureTableOverrideTest, GetHostExplainsWithTheOverridesRows) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::GetHostRequest req;
  req.set_host_id("vendor-1");
  v1::HostState host;
  grpc::Status st = stub_->GetHost(&ctx, req, &host);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(host.reports(), 2u);
  EXPECT_EQ(host.latest().feature_table_override().digest(), kVendorDigest);
  ASSERT_EQ(host.latest().feature_table_override().rows_size(), 2);

  // The purge: with combining, one flush per vmap node (128 of 256 CPUs)
  // plus one = 129, where the built-in table gives 2,804 + 1 = 2,805.
  const v1::VmapPurgePrediction& purge =
      host.latest().predictions().vmap_purge();
  EXPECT_EQ(purge.flushes_per_purge(), 129u);
  EXPECT_TRUE(purge.combined_flushes());
  ASSERT_GE(purge.basis().feature_rows_size(), 1);
  EXPECT_EQ(purge.basis().feature_rows(0),
            "kasan_flush_combined: since 6.12 -> 6.12.3: yes");
  EXPECT_TRUE(absl::StrContains(purge.summary(), "129 flushes"))
      << purge.summary();
  EXPECT_TRUE(absl::StrContains(purge.summary(), "(combined per vmap node)"))
      << purge.summary();

  // BPF kprobe_multi return: on fgraph with the vendor's row, so it walks
  // all 61,000 threads; built in, 6.12 has no fprobe on fgraph.
  const v1::AttachPrediction& attach = host.latest().predictions().attach(
      v1::PROBE_KIND_KPROBE_MULTI_RETURN - 1);
  EXPECT_TRUE(attach.uses_fgraph());
  EXPECT_EQ(attach.threads_total(), 61000u);
  ASSERT_GE(attach.basis().feature_rows_size(), 1);
  EXPECT_EQ(attach.basis().feature_rows(0),
            "fprobe_on_fgraph: since 6.12 -> 6.12.3: yes");
  EXPECT_TRUE(
      absl::StartsWith(attach.summary(),
                       "kprobe_multi return: first attach walks 61000 threads"))
      << attach.summary();
}

TEST_F(FeatureTableOverrideTest, WhatIfUsesTheHostsTable) {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::PredictAttachRequest req;
  req.mutable_hosts()->add_host_ids("vendor-1");
  req.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  req.mutable_what_if()->set_threads(300000);
  v1::PredictAttachResponse resp;
  grpc::Status st = stub_->PredictAttach(&ctx, req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.answers_size(), 1);
  const v1::AttachPrediction& p = resp.answers(0).prediction();
  // Recomputed for 300,000 threads with the vendor's row: the walk, and a
  // summary of that walk (not of the stored 61,000 threads).
  EXPECT_TRUE(p.uses_fgraph());
  EXPECT_EQ(p.threads_total(), 300000u);
  // The what-if clears the stored N_null bound: all 300,000 threads lack a
  // shadow stack, 300000 / 32 = 9375 passes.
  EXPECT_EQ(p.passes(), 9375u);
  EXPECT_TRUE(absl::StartsWith(
      p.summary(), "kprobe_multi return: first attach walks 300000 threads"))
      << p.summary();
  ASSERT_GE(p.basis().feature_rows_size(), 1);
  EXPECT_EQ(p.basis().feature_rows(0),
            "fprobe_on_fgraph: since 6.12 -> 6.12.3: yes");
}

}  // namespace
}  // namespace tracehealth::testing
