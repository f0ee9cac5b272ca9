// Hostile FleetQuery requests (hostile_input_fixture.h): bad values and
// bytes that do not decode are INVALID_ARGUMENT (NOT_FOUND for an unknown
// host) with a message that says why, never a crash, while ingest goes on.
#include <signal.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "tests/reliability/hostile_input_fixture.h"

namespace tracehealth::testing {
namespace {

// Bad query requests get INVALID_ARGUMENT, never a crash or a nonsense
// answer, while ingest goes on.
TEST_F(HostileInputTest, BadQueryRequests) {
  Start();
  auto list = [&](const v1::ListHostsRequest& req) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::ListHostsResponse resp;
    return query_->ListHosts(&ctx, req, &resp);
  };
  for (const std::string sel :
       {"=x", "role=~\"(", "role=\"unterminated", "role"}) {
    v1::ListHostsRequest req;
    req.mutable_hosts()->set_labels(sel);
    EXPECT_EQ(list(req).error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << sel;
  }
  {
    v1::ListHostsRequest req;
    for (int i = 0; i < 100000; ++i)
      req.mutable_hosts()->add_host_ids(absl::StrCat("h", i));
    grpc::Status st = list(req);
    EXPECT_TRUE(st.ok() ||
                st.error_code() == grpc::StatusCode::INVALID_ARGUMENT)
        << st.error_message();
  }
  auto predict = [&](const v1::WhatIf& w) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::PredictAttachRequest req;
    req.mutable_hosts()->add_host_ids("bystander");
    *req.mutable_what_if() = w;
    v1::PredictAttachResponse resp;
    grpc::Status st = query_->PredictAttach(&ctx, req, &resp);
    return std::make_pair(st, resp);
  };
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  for (double v : {kNan, kInf, -1.0}) {
    v1::WhatIf w;
    w.set_c_visit_seconds(v);
    EXPECT_EQ(predict(w).first.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << "c_visit_seconds " << v;
    v1::WhatIf b;
    b.set_latency_budget_seconds(v);
    EXPECT_EQ(predict(b).first.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << "latency_budget_seconds " << v;
  }
  for (const std::string rel : {"", "garbage", "6", "999.1.1", "6.1\x01"}) {
    v1::WhatIf w;
    w.set_kernel_release(rel);
    EXPECT_EQ(predict(w).first.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << "kernel_release \"" << absl::CEscape(rel) << "\"";
  }
  {
    // Extreme but well-formed what-ifs: an answer with finite numbers, or a
    // refusal.
    v1::WhatIf w;
    w.set_threads(std::numeric_limits<uint64_t>::max());
    w.set_null_threads(std::numeric_limits<uint64_t>::max());
    w.set_batch(std::numeric_limits<uint32_t>::max());
    auto [st, resp] = predict(w);
    if (st.ok()) {
      for (const auto& a : resp.answers()) {
        EXPECT_TRUE(std::isfinite(a.prediction().latency_seconds()))
            << a.DebugString();
      }
    } else {
      EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << st.error_message();
    }
  }
  ExpectBystanderServed();
}

// Sends `bytes` as the request of FleetQuery method `method` ("GetHost").
grpc::Status RawQuery(const std::shared_ptr<grpc::Channel>& channel,
                      const std::string& method, const std::string& bytes) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  auto call = stub.PrepareUnaryCall(
      &ctx, "/tracehealth.v1.FleetQuery/" + method, request, &cq);
  call->StartCall();
  grpc::ByteBuffer response;
  grpc::Status st;
  call->Finish(&response, &st, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  EXPECT_TRUE(cq.Next(&tag, &ok));
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return st;
}

// Requests that do not decode, an empty or a 20 kB host id, and selectors
// with a doubled operator or empty matchers: each refused with
// INVALID_ARGUMENT (NOT_FOUND for an unknown host) and a message that says
// why and echoes at most 128 bytes of the input.
TEST_F(HostileInputTest, MalformedQueriesAreInvalidArguments) {
  Start();
  for (const std::string method : {"PredictAttach", "GetHost", "ListHosts",
                                   "ListAlerts", "FleetSummary"}) {
    // Field 1 as a varint whose bytes never end.
    grpc::Status st = RawQuery(channel_, method, "\x0a\xff\xff\xff");
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << method << ": " << st.error_message();
    EXPECT_TRUE(absl::StartsWith(
        st.error_message(), "request does not decode as a tracehealth.v1."))
        << st.error_message();
  }
  auto get = [&](const std::string& id) {
    grpc::ClientContext ctx;
    v1::GetHostRequest req;
    req.set_host_id(id);
    v1::HostState resp;
    return query_->GetHost(&ctx, req, &resp);
  };
  grpc::Status empty = get("");
  EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(empty.error_message(), "host_id: required");
  grpc::Status big = get(std::string(20000, 'h'));
  EXPECT_EQ(big.error_code(), grpc::StatusCode::NOT_FOUND)
      << big.error_message().substr(0, 200);
  EXPECT_EQ(big.error_message(),
            "unknown host \"" + std::string(128, 'h') + "…(20000 bytes)\"");
  for (const std::string sel : {"role==db", "role=db,,", "role=db,"}) {
    grpc::ClientContext ctx;
    v1::ListHostsRequest req;
    req.mutable_hosts()->set_labels(sel);
    v1::ListHostsResponse resp;
    grpc::Status st = query_->ListHosts(&ctx, req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << sel;
    EXPECT_TRUE(absl::StrContains(st.error_message(),
                                  sel == "role==db"
                                      ? "starts with an operator character"
                                      : "empty matcher"))
        << st.error_message();
  }
  ExpectBystanderServed();
}

}  // namespace
}  // namespace tracehealth::testing
