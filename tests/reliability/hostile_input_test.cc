// Hostile input against the real tracehealth-server binary over loopback
// gRPC: every bad report or request is refused with the right code (a
// Rejection in the Ack, or the stream's / call's status) while a bystander
// host streams in parallel and keeps being served, and nothing refused is
// stored.
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "proto/tracehealth/v1/query.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/server_process.h"
#include "tests/util/sample_report.h"
#include "tests/util/subprocess.h"

namespace tracehealth::testing {
namespace {

constexpr int kInvalidArgument =
    static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT);

v1::HostReport Report(const std::string& host_id, uint64_t seq,
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

TEST_F(HostileInputTest, OversizedMessages) {
  Start({"--max_report_bytes=200000", "--max_message_bytes=1000000"});
  v1::HostReport big = Report("big", 1);
  big.mutable_snapshot()->mutable_kernel()->set_cmdline(
      std::string(300000, 'x'));
  ExpectRejected("big", big, "report above --max_report_bytes");

  // Above the transport limit gRPC ends the stream; nothing of it is stored.
  ReportStream s(ingest_.get());
  v1::HostReport huge = Report("huge", 1);
  huge.mutable_snapshot()->mutable_kernel()->set_cmdline(
      std::string(1500000, 'x'));
  s.Send(huge);
  grpc::Status st = s.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << st.error_message();
  EXPECT_EQ(StoredReports("huge"), 0u);

  // Many large repeated entries (each small, the whole over the limit).
  v1::HostReport wide = Report("wide", 1);
  for (int i = 0; i < 5000; ++i) {
    wide.mutable_snapshot()->add_unknown()->set_input(
        absl::StrCat("input-", i));
  }
  ExpectRejected("wide", wide, "repeated field above the limit");
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, HugeLabelSets) {
  Start();
  v1::HostReport many = Report("labels", 1);
  for (int i = 0; i < 10000; ++i)
    (*many.mutable_labels())[absl::StrCat("k", i)] = "v";
  ExpectRejected("labels", many, "10,000 labels");
  v1::HostReport sixty_five = Report("labels", 1);
  for (int i = 0; i < 65; ++i)
    (*sixty_five.mutable_labels())[absl::StrCat("k", i)] = "v";
  ExpectRejected("labels", sixty_five, "65 labels");
  v1::HostReport long_key = Report("labels", 1);
  (*long_key.mutable_labels())[std::string(64, 'k')] = "v";
  ExpectRejected("labels", long_key, "64-byte label key");
  v1::HostReport long_value = Report("labels", 1);
  (*long_value.mutable_labels())["role"] = std::string(100000, 'v');
  ExpectRejected("labels", long_value, "100 kB label value");
  v1::HostReport empty_key = Report("labels", 1);
  (*empty_key.mutable_labels())[""] = "v";
  ExpectRejected("labels", empty_key, "empty label key");
  // At the limits it is accepted.
  v1::HostReport ok = Report("labels", 1000);
  ok.mutable_labels()->clear();
  for (int i = 0; i < 64; ++i)
    (*ok.mutable_labels())[absl::StrCat("k", i)] = std::string(255, 'v');
  ReportStream s(ingest_.get());
  ASSERT_TRUE(s.Send(ok));
  EXPECT_TRUE(s.WaitAcked(1000));
  EXPECT_TRUE(s.rejections().empty());
  EXPECT_TRUE(s.Finish().ok());
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, PathLikeAndInvalidHostIds) {
  Start();
  const std::vector<std::string> bad_ids = {"../x",
                                            "a/b",
                                            "/etc/passwd",
                                            "../..",
                                            "",
                                            "a b",
                                            "host\n2",
                                            "x\\y",
                                            "h;rm -rf",
                                            "h\x01",
                                            "ü-host",
                                            std::string(254, 'h'),
                                            std::string("nul\0byte", 8)};
  for (const std::string& id : bad_ids) {
    ExpectRejected("", Report(id, 1),
                   absl::StrCat("host id \"", absl::CEscape(id), "\""));
  }
  // A stream that starts with a bad id may not continue as a good host
  // either way: the rejection does not bind the stream to anything.
  for (const std::string& id : bad_ids) {
    if (id.empty()) continue;
    EXPECT_EQ(StoredReports(id), 0u) << absl::CEscape(id);
  }
  // Nothing was created next to the database by a path-like id.
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(data_dir_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(absl::StartsWith(name, "tracehealth.db") ||
                name == "tracehealth.lock" || name == "ports" ||
                absl::EndsWith(name, ".log"))
        << entry.path();
  }
  EXPECT_FALSE(std::filesystem::exists(
      std::filesystem::path(data_dir_).parent_path() / "x"));

  // Invalid UTF-8 in a string field: proto3 strings must be UTF-8, so the
  // message does not decode: the stream ends with INVALID_ARGUMENT and
  // nothing of it is stored.
  {
    ReportStream s(ingest_.get());
    s.Send(Report(std::string("bad\xff\xfe"), 1));
    grpc::Status st = s.Finish();
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << st.error_message();
    EXPECT_EQ(s.acked(), 0u);
    std::printf("invalid UTF-8 host id: stream ended with %d (%s)\n",
                static_cast<int>(st.error_code()), st.error_message().c_str());
  }
  {
    ReportStream s(ingest_.get());
    v1::HostReport r = Report("utf8-label", 1);
    (*r.mutable_labels())["role"] = std::string("\xc3\x28");
    s.Send(r);
    EXPECT_EQ(s.Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(StoredReports("utf8-label"), 0u);
  }
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, SeqZeroHugeAndBackwards) {
  Start();
  ExpectRejected("seq", Report("seq", 0), "seq 0");
  ExpectRejected("seq", Report("seq", uint64_t{1} << 63), "seq 2^63");
  ExpectRejected("seq", Report("seq", std::numeric_limits<uint64_t>::max()),
                 "seq 2^64-1");

  const absl::Time t0 = absl::Now();
  ReportStream s(ingest_.get());
  v1::HostReport r10 = Report("back", 10, t0);
  ASSERT_TRUE(s.Send(r10));
  ASSERT_TRUE(s.WaitAcked(10));
  // A replay of a stored seq with other content is acked and not stored
  // again: the first write wins.
  v1::HostReport replay = Report("back", 10, t0);
  replay.set_interval_seconds(999);
  ASSERT_TRUE(s.Send(replay));
  // A seq below the newest one: never allowed to become the latest state.
  v1::HostReport older = Report("back", 5, t0 - absl::Minutes(5));
  older.set_interval_seconds(555);
  ASSERT_TRUE(s.Send(older));
  ASSERT_TRUE(s.Send(Report("back", 11, t0)));
  ASSERT_TRUE(s.WaitAcked(11));
  EXPECT_TRUE(s.Finish().ok());

  grpc::ClientContext ctx;
  v1::GetHostRequest req;
  req.set_host_id("back");
  v1::HostState st;
  ASSERT_TRUE(query_->GetHost(&ctx, req, &st).ok());
  EXPECT_EQ(st.latest().seq(), 11u);
  EXPECT_NE(st.latest().interval_seconds(), 999);
  EXPECT_NE(st.latest().interval_seconds(), 555);
  EXPECT_LE(st.reports(), 3u);  // 10, 11 and at most the late 5
  std::printf("seq backwards: host holds %llu reports (5 %s)\n",
              static_cast<unsigned long long>(st.reports()),
              st.reports() == 3 ? "stored as a late report" : "not stored");
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, NonFiniteAndNegativeNumbers) {
  Start();
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  for (double v : {kNan, kInf, -kInf, -30.0}) {
    v1::HostReport r = Report("numbers", 1);
    r.set_interval_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("interval_seconds ", v));
  }
  for (double v : {kNan, kInf, -1.0}) {
    v1::HostReport r = Report("numbers", 1);
    r.mutable_snapshot()->mutable_threads()->set_uptime_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("uptime_seconds ", v));
  }
  for (double v : {kNan, -kInf}) {
    v1::HostReport r = Report("numbers", 1);
    ASSERT_GT(r.predictions().attach_size(), 0);
    r.mutable_predictions()->mutable_attach(0)->set_latency_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("attach latency ", v));
  }
  for (double v : {kInf, -0.5}) {
    v1::HostReport r = Report("numbers", 1);
    r.mutable_health()->set_cycle_seconds(v);
    ExpectRejected("numbers", r, absl::StrCat("cycle_seconds ", v));
  }
  ExpectBystanderServed();
}

TEST_F(HostileInputTest, TimestampsOutOfRange) {
  Start();
  const absl::Time now = absl::Now();
  ExpectRejected("time", Report("time", 1, now + absl::Hours(2)), "2 h ahead");
  ExpectRejected("time",
                 Report("time", 1,
                        absl::FromCivil(absl::CivilSecond(9999, 1, 1),
                                        absl::UTCTimeZone())),
                 "year 9999");
  v1::HostReport beyond = Report("time", 1);
  beyond.mutable_observed_at()->set_seconds(int64_t{1} << 50);
  ExpectRejected("time", beyond, "beyond the Timestamp range");
  v1::HostReport negative_nanos = Report("time", 1);
  negative_nanos.mutable_observed_at()->set_nanos(-5);
  ExpectRejected("time", negative_nanos, "negative nanos");
  v1::HostReport missing = Report("time", 1);
  missing.clear_observed_at();
  ExpectRejected("time", missing, "no observed_at");
  ExpectBystanderServed();
}

// Without a query token file queries are open; with one, only the exact
// bearer token passes, while ingest (agents) goes on.
TEST_F(HostileInputTest, QueryCredentials) {
  const std::string dir = NewTempDir("token");
  ASSERT_TRUE(WriteFile(dir + "/token", "s3cret-token\n").ok());
  Start({"--query_token_file=" + dir + "/token"});
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"", ""},
      {"authorization", "Bearer wrong"},
      {"authorization", "Bearer "},
      {"authorization", "Bearer s3cret"},
      {"authorization", "Bearer s3cret-token-and-more"},
      {"authorization", "Basic s3cret-token"},
      {"authorization", "s3cret-token"},
      {"authorization", "Bearer  s3cret-token"},
      {"x-api-key", "s3cret-token"},
  };
  for (const auto& [key, value] : refused) {
    for (int rpc = 0; rpc < 3; ++rpc) {
      grpc::ClientContext ctx;
      if (!key.empty()) ctx.AddMetadata(key, value);
      grpc::Status st;
      if (rpc == 0) {
        v1::ListHostsResponse resp;
        st = query_->ListHosts(&ctx, {}, &resp);
      } else if (rpc == 1) {
        v1::GetHostRequest req;
        req.set_host_id("bystander");
        v1::HostState resp;
        st = query_->GetHost(&ctx, req, &resp);
      } else {
        v1::FleetSummaryResponse resp;
        st = query_->FleetSummary(&ctx, {}, &resp);
      }
      EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED)
          << key << ": " << value << " rpc " << rpc;
    }
  }
  grpc::ClientContext ok;
  ok.AddMetadata("authorization", "Bearer s3cret-token");
  EXPECT_GT(StoredReports("bystander", &ok), 0u);
  ExpectBystanderServed();
}

// Runs the openssl CLI in `dir`; true on exit 0.
bool Openssl(const std::string& dir, const std::string& args) {
  const std::string cmd =
      absl::StrCat("cd '", dir, "' && openssl ", args, " >/dev/null 2>&1");
  return std::system(cmd.c_str()) == 0;
}

// A CA in `dir` (prefix `ca`) and client certificates signed by it.
bool MakeCa(const std::string& dir, const std::string& ca) {
  return Openssl(dir,
                 absl::StrCat("req -x509 -newkey rsa:2048 -nodes -keyout ", ca,
                              ".key -out ", ca, ".pem -days 1 -subj /CN=", ca));
}
bool MakeCert(const std::string& dir, const std::string& ca,
              const std::string& name, const std::string& cn,
              const std::string& ext = "") {
  if (!Openssl(dir, absl::StrCat("req -newkey rsa:2048 -nodes -keyout ", name,
                                 ".key -out ", name, ".csr -subj /CN=", cn))) {
    return false;
  }
  return Openssl(
      dir, absl::StrCat("x509 -req -in ", name, ".csr -CA ", ca, ".pem -CAkey ",
                        ca, ".key -CAcreateserial -out ", name, ".pem -days 1",
                        ext.empty() ? "" : " -extfile " + ext));
}

TEST_F(HostileInputTest, MutualTlsRefusesMissingOrForeignCertificates) {
  const std::string d = NewTempDir("pki");
  ASSERT_TRUE(MakeCa(d, "ca"));
  ASSERT_TRUE(MakeCa(d, "rogue"));
  ASSERT_TRUE(WriteFile(d + "/server.ext",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
                  .ok());
  ASSERT_TRUE(MakeCert(d, "ca", "server", "localhost", "server.ext"));
  ASSERT_TRUE(MakeCert(d, "ca", "bystander", "bystander"));
  ASSERT_TRUE(MakeCert(d, "ca", "host-a", "host-a"));
  ASSERT_TRUE(MakeCert(d, "rogue", "rogue-a", "host-a"));
  auto read = [&](const std::string& f) { return *ReadFile(d + "/" + f); };
  auto creds = [&](const std::string& cert) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = read("ca.pem");
    if (!cert.empty()) {
      o.pem_private_key = read(cert + ".key");
      o.pem_cert_chain = read(cert + ".pem");
    }
    return grpc::SslCredentials(o);
  };
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  Start({"--tls_cert=" + d + "/server.pem", "--tls_key=" + d + "/server.key",
         "--tls_client_ca=" + d + "/ca.pem"},
        creds("bystander"), args);

  // Each refused client connects on its own channel and gets an error
  // before anything is stored.
  auto attempt = [&](std::shared_ptr<grpc::ChannelCredentials> c,
                     const std::string& host) {
    grpc::ChannelArguments a = args;
    a.SetInt("tracehealth.attempt", std::rand());
    auto stub = v1::TelemetryIngest::NewStub(
        grpc::CreateCustomChannel(server_.grpc_addr, c, a));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    auto stream = stub->Report(&ctx);
    stream->Write(Report(host, 1));
    stream->WritesDone();
    v1::Ack ack;
    uint64_t acked = 0;
    while (stream->Read(&ack)) acked = std::max(acked, ack.acked_seq());
    grpc::Status st = stream->Finish();
    if (!st.ok()) {
      EXPECT_EQ(acked, 0u) << host << " refused yet acked";
    }
    return st;
  };
  grpc::Status none = attempt(creds(""), "host-a");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAVAILABLE)
      << none.error_message();
  grpc::Status rogue = attempt(creds("rogue-a"), "host-a");
  EXPECT_EQ(rogue.error_code(), grpc::StatusCode::UNAVAILABLE)
      << rogue.error_message();
  grpc::Status plain = attempt(grpc::InsecureChannelCredentials(), "host-a");
  EXPECT_EQ(plain.error_code(), grpc::StatusCode::UNAVAILABLE)
      << plain.error_message();
  grpc::Status other = attempt(creds("host-a"), "host-b");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << other.error_message();
  grpc::Status spoof = attempt(creds("host-a"), "bystander");
  EXPECT_EQ(spoof.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << spoof.error_message();
  EXPECT_TRUE(attempt(creds("host-a"), "host-a").ok());
  EXPECT_EQ(StoredReports("host-a"), 1u);
  EXPECT_EQ(StoredReports("host-b"), 0u);
  ExpectBystanderServed();
}

// One host floods the server as fast as it can write. Every other host must
// keep being served with low latency.
TEST_F(HostileInputTest, FloodFromOneHostDoesNotStarveOthers) {
  Start();
  ReportStream flood(ingest_.get());
  v1::HostReport r = Report("flooder", 1);
  const absl::Time start = absl::Now();
  uint64_t sent = 0;
  while (absl::Now() - start < absl::Seconds(8)) {
    r.set_seq(++sent);
    if (!flood.Send(r)) break;
  }
  flood.WaitAcked(sent, absl::Seconds(30));
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  const uint64_t acked = flood.acked();
  grpc::Status st = flood.Finish();
  std::printf(
      "flood: %llu reports sent by one host in 8 s, %llu acked (%.0f/s), %zu "
      "refused, "
      "stream %s\n",
      static_cast<unsigned long long>(sent),
      static_cast<unsigned long long>(acked), acked / secs,
      flood.rejections().size(), st.ok() ? "OK" : st.error_message().c_str());
  ExpectBystanderServed();
}

// A per-host rate limit: a host sending far faster than any agent interval
// (one report every few seconds) is refused with RESOURCE_EXHAUSTED instead
// of filling the database.
TEST_F(HostileInputTest, FloodFromOneHostIsRateLimited) {
  Start();
  ReportStream flood(ingest_.get());
  v1::HostReport r = Report("flooder", 1);
  uint64_t sent = 0;
  for (; sent < 5000;) {
    r.set_seq(++sent);
    if (!flood.Send(r)) break;
  }
  flood.WaitAcked(sent, absl::Seconds(30));
  size_t limited = 0;
  for (const auto& rej : flood.rejections()) {
    if (rej.code() == static_cast<int>(grpc::StatusCode::RESOURCE_EXHAUSTED))
      ++limited;
  }
  grpc::Status st = flood.Finish();
  const bool stream_limited =
      st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
  std::printf(
      "flood of %llu: %llu acked, %zu refused RESOURCE_EXHAUSTED, stream: %s\n",
      static_cast<unsigned long long>(sent),
      static_cast<unsigned long long>(flood.acked()), limited,
      st.error_message().c_str());
  EXPECT_TRUE(limited > 0 || stream_limited)
      << "5,000 reports of one host in a burst were all accepted: no per-host "
         "rate limit";
  EXPECT_LT(StoredReports("flooder"), 1000u);
  ExpectBystanderServed();
}

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

// Reports outside the contract's bounds: repeated attach predictions for a
// probe kind, enum values no type defines, a cmdline over 4 KiB, an
// interval of 0 or of years. Each is a Rejection naming the field, nothing
// of it is stored, and FleetSummary still counts every host once.
TEST_F(HostileInputTest, ReportsOutsideTheContractsBounds) {
  Start();
  struct Case {
    const char* why;
    std::function<void(v1::HostReport&)> breaks;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"201 attach predictions of one kind",
       [](v1::HostReport& r) {
         v1::AttachPrediction a = r.predictions().attach(0);
         r.mutable_predictions()->clear_attach();
         for (int i = 0; i < 201; ++i)
           *r.mutable_predictions()->add_attach() = a;
       },
       "predictions.attach: 201 entries for probe_kind "},
      {"worst_risk 7",
       [](v1::HostReport& r) {
         r.mutable_predictions()->set_worst_risk(static_cast<v1::Risk>(7));
       },
       "predictions.worst_risk: 7 is not a tracehealth.v1.Risk value"},
      {"attach risk -3",
       [](v1::HostReport& r) {
         r.mutable_predictions()->mutable_attach(0)->set_risk(
             static_cast<v1::Risk>(-3));
       },
       "predictions.attach.risk: -3 is not a tracehealth.v1.Risk value"},
      {"cmdline of 4097 bytes",
       [](v1::HostReport& r) {
         r.mutable_snapshot()->mutable_kernel()->set_cmdline(
             std::string(4097, 'c'));
       },
       "snapshot.kernel.cmdline: 4097 bytes (at most 4096)"},
      {"interval 0", [](v1::HostReport& r) { r.set_interval_seconds(0); },
       "interval_seconds: 0 (must be 0.001 to 86400 s)"},
      {"interval of 30 years",
       [](v1::HostReport& r) { r.set_interval_seconds(946080000); },
       "interval_seconds: 9.4608e+08 (must be 0.001 to 86400 s)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    v1::HostReport bad = Report("bounds", 1);
    c.breaks(bad);
    ReportStream s(ingest_.get());
    ASSERT_TRUE(s.Send(bad));
    ASSERT_TRUE(s.WaitRejections(1));
    std::vector<v1::Rejection> rej = s.rejections();
    ASSERT_EQ(rej.size(), 1u);
    EXPECT_EQ(rej[0].code(), kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(rej[0].message(), c.message))
        << rej[0].message();
    EXPECT_TRUE(s.Finish().ok());
    EXPECT_EQ(StoredReports("bounds"), 0u);
  }
  grpc::ClientContext ctx;
  v1::FleetSummaryResponse fs;
  ASSERT_TRUE(query_->FleetSummary(&ctx, {}, &fs).ok());
  uint32_t counted = 0;
  for (const auto& c : fs.by_risk()) counted += c.hosts();
  EXPECT_EQ(counted, fs.hosts());
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

// Host ids made only of dots are refused: "." and ".." are path components
// wherever a host id ends up in a path or URL (exports, dashboards, alert
// links).
TEST_F(HostileInputTest, DotHostIdsAreRejected) {
  Start();
  for (const std::string id : {".", "..", "..."}) {
    ExpectRejected("", Report(id, 1), absl::StrCat("host id \"", id, "\""));
    EXPECT_EQ(StoredReports(id), 0u) << id;
  }
  ExpectBystanderServed();
}

// A message that does not decode (invalid UTF-8 in a proto3 string) ends
// the stream with INVALID_ARGUMENT, not as if the agent had half-closed
// (which would look like success without an ack, and be resent forever);
// what came before it on the stream stays stored.
TEST_F(HostileInputTest, UndecodableReportEndsStreamWithError) {
  Start();
  ReportStream s(ingest_.get());
  ASSERT_TRUE(s.Send(Report("decode", 1)));
  ASSERT_TRUE(s.WaitAcked(1));
  v1::HostReport bad = Report("decode", 2);
  (*bad.mutable_labels())["role"] = std::string("\xc3\x28");
  s.Send(bad);
  grpc::Status st = s.Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << "stream ended with " << static_cast<int>(st.error_code()) << " "
      << st.error_message();
  EXPECT_EQ(StoredReports("decode"), 1u);
  ExpectBystanderServed();
}

}  // namespace
}  // namespace tracehealth::testing
