// The real tracehealth-server's HTTP port as an outside client sees it:
// /metrics keeps being served with hundreds of idle and half-sent
// connections open (and counts their descriptors in process_open_fds), and
// those are closed after their timeouts; the bearer token on /api/v1 (and
// /metrics when asked); HTTPS with a certificate made by
// deploy/tls/make-certs.sh; the status codes of the JSON API; the rollout
// plan's route, its JSON on two hosts and its refusals.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/tracehealth/v1/ingest.grpc.pb.h"
#include "tests/reliability/ingest_client.h"
#include "tests/server/raw_http.h"
#include "tests/server/server_process.h"
#include "tests/util/subprocess.h"
#include "tools/loadgen/sample_report.h"

namespace tracehealth::testing {
namespace {

using server::SampleHost;
using server::SampleReport;

// The value of the first sample whose line starts with `series` (a name,
// or a name and the start of its labels); -1 when there is none.
double SampleValue(const std::string& exposition, const std::string& series) {
  const size_t at = exposition.find("\n" + series);
  if (at == std::string::npos) return -1;
  const size_t value = exposition.find(' ', at + 1);
  return value == std::string::npos ? -1 : std::stod(exposition.substr(value));
}

ServerProcess Start(const std::string& dir, std::vector<std::string> flags) {
  absl::StatusOr<ServerProcess> sp = StartServer(dir, flags);
  EXPECT_TRUE(sp.ok()) << sp.status();
  return sp.ok() ? std::move(*sp) : ServerProcess{};
}

TEST(HttpExposureTest, ScrapesGoOnWithHundredsOfIdleAndHalfSentConnections) {
  const std::string dir = NewTempDir("http-dos");
  // Idle connections close after 2 s, requests must be complete within 4 s.
  ServerProcess sp =
      Start(dir, {"--http_idle_timeout=2s", "--http_request_timeout=4s"});
  ASSERT_NE(sp.process, nullptr);
  constexpr int kIdle = 300;
  constexpr int kHalfSent = 16;
  std::vector<int> idle, half;
  for (int i = 0; i < kIdle; ++i) {
    absl::StatusOr<int> fd = ConnectTcp(sp.metrics_addr);
    ASSERT_TRUE(fd.ok()) << i << ": " << fd.status();
    idle.push_back(*fd);
  }
  const std::string partial = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Half: ";
  for (int i = 0; i < kHalfSent; ++i) {
    absl::StatusOr<int> fd = ConnectTcp(sp.metrics_addr);
    ASSERT_TRUE(fd.ok()) << fd.status();
    ASSERT_EQ(write(*fd, partial.data(), partial.size()),
              static_cast<ssize_t>(partial.size()));
    half.push_back(*fd);
  }
  const absl::Time opened = absl::Now();
  // Ten scrapes while all of them are open.
  absl::Duration worst = absl::ZeroDuration();
  std::string last;
  for (int i = 0; i < 10; ++i) {
    const absl::Time t0 = absl::Now();
    absl::StatusOr<RawResponse> r = RawExchange(
        sp.metrics_addr, RequestText("GET", "/metrics"), absl::Seconds(1));
    const absl::Duration took = absl::Now() - t0;
    worst = std::max(worst, took);
    ASSERT_TRUE(r.ok()) << "scrape " << i << ": " << r.status();
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(absl::StrContains(r->body, "tracehealth_ingest_reports_total"))
        << r->body.substr(0, 200);
    last = r->body;
  }
  std::printf("%d idle + %d half-sent connections: 10 scrapes, slowest %s\n",
              kIdle, kHalfSent, absl::FormatDuration(worst).c_str());
  // The server's own process, read at the scrape: its listeners, store and
  // HTTP connections are descriptors; its index and buffers heap.
  const double open_fds = SampleValue(last, "process_open_fds ");
  const double max_fds = SampleValue(last, "process_max_fds ");
#ifdef TRACEHEALTH_SYSTEM_MALLOC
  const double heap =
      SampleValue(last, "tracehealth_heap_allocated_bytes{allocator=\"");
#else
  const double heap = SampleValue(
      last, "tracehealth_heap_allocated_bytes{allocator=\"tcmalloc\"}");
#endif
  std::printf("server: %.0f of %.0f descriptors open, heap %.1f MB\n", open_fds,
              max_fds, heap / 1e6);
  EXPECT_GT(open_fds, 5);
  // Accepted in order from the listen queue, the connections opened before
  // the scrape's are all the server's by then.
  EXPECT_GE(open_fds, kIdle + kHalfSent);
  EXPECT_GT(max_fds, open_fds);
  EXPECT_GT(heap, 1e6);
  // The idle ones are closed after 2 s (not before 1.5 s); the half-sent
  // ones, silent after their first bytes, by the same timeout (the request
  // timeout, 4 s, would close them if they kept sending: http_server_test).
  int idle_closed = 0, half_closed = 0;
  for (int fd : idle)
    idle_closed += ClosedByPeer(fd, opened + absl::Seconds(4) - absl::Now());
  const absl::Duration idle_done = absl::Now() - opened;
  for (int fd : half)
    half_closed += ClosedByPeer(fd, opened + absl::Seconds(6) - absl::Now());
  std::printf(
      "closed by the server: %d of %d idle (all by %s), %d of %d half-sent (by "
      "%s)\n",
      idle_closed, kIdle, absl::FormatDuration(idle_done).c_str(), half_closed,
      kHalfSent, absl::FormatDuration(absl::Now() - opened).c_str());
  EXPECT_EQ(idle_closed, kIdle);
  EXPECT_EQ(half_closed, kHalfSent);
  EXPECT_GE(idle_done, absl::Milliseconds(1500));
  for (int fd : idle) close(fd);
  for (int fd : half) close(fd);
}

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewTempDir("http-api");
    ASSERT_TRUE(WriteFile(dir_ + "/token", "s3cret-token\n").ok());
    sp_ = Start(dir_, {"--query_token_file=" + dir_ + "/token",
                       "--metrics_require_token"});
    ASSERT_NE(sp_.process, nullptr);
    auto channel =
        grpc::CreateChannel(sp_.grpc_addr, grpc::InsecureChannelCredentials());
    auto stub = v1::TelemetryIngest::NewStub(channel);
    ReportStream s(stub.get());
    SampleHost h;
    h.host_id = "db-1";
    h.threads = 240000;
    ASSERT_TRUE(s.Send(SampleReport(h, 1, absl::Now())));
    ASSERT_TRUE(s.WaitAcked(1));
    EXPECT_TRUE(s.Finish().ok());
  }
  RawResponse Get(const std::string& path,
                  const std::string& token = "s3cret-token") {
    absl::StatusOr<RawResponse> r = testing::Get(sp_.metrics_addr, path, token);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status();
    return r.ok() ? *r : RawResponse{};
  }
  std::string dir_;
  ServerProcess sp_;
};

TEST_F(HttpApiTest, TheTokenGuardsTheApiAndMetricsButNotThePage) {
  for (const std::string path :
       {"/api/v1/hosts", "/api/v1/summary", "/metrics"}) {
    RawResponse missing = Get(path, "");
    EXPECT_EQ(missing.status, 401) << path;
    EXPECT_EQ(missing.Header("WWW-Authenticate"),
              "Bearer realm=\"tracehealth\"")
        << path;
    EXPECT_EQ(Get(path, "wrong").status, 403) << path;
    EXPECT_EQ(Get(path, "s3cret-token-and-more").status, 403) << path;
    EXPECT_EQ(Get(path).status, 200) << path;
  }
  EXPECT_EQ(Get("/api/v1/hosts", "").body,
            R"({"error":{"code":401,"message":"bearer token required"}})");
  // The page and its files hold no fleet data.
  RawResponse page = Get("/", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_TRUE(absl::StrContains(page.Header("Content-Security-Policy"),
                                "script-src 'self'"));
  EXPECT_EQ(Get("/static/app.js", "").status, 200);
}

TEST_F(HttpApiTest, JsonEndpointsAnswerWithTheQueryApisMessagesAndCodes) {
  RawResponse hosts = Get("/api/v1/hosts?sort=HOST_SORT_HOST_ID&limit=5");
  EXPECT_EQ(hosts.status, 200);
  EXPECT_EQ(hosts.Header("Content-Type"), "application/json");
  EXPECT_TRUE(absl::StrContains(hosts.body, R"("host_id":"db-1")"))
      << hosts.body;
  EXPECT_TRUE(absl::StrContains(hosts.body, R"("matched_hosts":1)"))
      << hosts.body;
  RawResponse host = Get("/api/v1/hosts/db-1");
  EXPECT_EQ(host.status, 200);
  EXPECT_TRUE(absl::StrContains(host.body, R"("threads":{"total":"240000")"))
      << host.body.substr(0, 400);
  RawResponse history = Get("/api/v1/hosts/db-1/history");
  EXPECT_EQ(history.status, 200);
  EXPECT_TRUE(absl::StrContains(history.body, R"("matched_reports":1)"))
      << history.body;

  // No events stored: an empty list.
  RawResponse events = Get("/api/v1/events?predicted=EVENT_PREDICTION_NO");
  EXPECT_EQ(events.status, 200);
  EXPECT_EQ(events.body, R"({"events":[]})");

  // No canaries and no events: db-1's hardware class (the sample host's
  // CPU model and kernel 6.16.3's release family), one host, nothing to
  // compare.
  RawResponse accuracy = Get("/api/v1/accuracy");
  EXPECT_EQ(accuracy.status, 200);
  EXPECT_EQ(accuracy.body,
            R"({"classes":[{"hardware_class":"Intel(R) Xeon(R) Platinum )"
            R"(8480+ / 6.16","canaries":0,"calibrations":0,)"
            R"("c_visit_median_seconds":0,"c_visit_min_seconds":0,)"
            R"("c_visit_max_seconds":0,"c_visit_spread":0,)"
            R"("fixed_median_seconds":0,"hosts":1,"events":0,)"
            R"("events_predicted":0,"events_missed":0,"events_unknown":0,)"
            R"("samples":[],"c_visit_seconds":0,"visit_levels":[],)"
            R"("curve_points":0,"curve_min_threads":"0",)"
            R"("curve_max_threads":"0"}],"events_unclassified":0})");

  struct Case {
    std::string path;
    int status;
    std::string message;
  } cases[] = {
      {"/api/v1/hosts/nope", 404, R"(unknown host \"nope\")"},
      {"/api/v1/hosts/nope/history", 404, R"(unknown host \"nope\")"},
      {"/api/v1/hosts?hosts.labels=role%3D~%28", 400, R"(bad regex \"(\")"},
      {"/api/v1/hosts?bogus=1", 400, R"(unknown query parameter \"bogus\")"},
      {"/api/v1/hosts?min_risk=RISK_HUGE", 400, "bad query parameters"},
      {"/api/v1/hosts/db-1/"
       "history?from=2030-01-01T00:00:00Z&to=2029-01-01T00:00:00Z",
       400, "from is after to"},
      {"/api/v1/events?limit=10001", 400, "limit 10001 is over 10000"},
      {"/api/v1/events?from=2030-01-01T00:00:00Z&to=2029-01-01T00:00:00Z", 400,
       "from is after to"},
      {"/api/v1/events?predicted=EVENT_PREDICTION_MAYBE", 400,
       "bad query parameters"},
      {"/api/v1/accuracy?limit=10001", 400, "limit 10001 is over 10000"},
      {"/api/v1/accuracy?from=2030-01-01T00:00:00Z&to=2029-01-01T00:00:00Z",
       400, "from is after to"},
      {"/api/v1/accuracy?host_id=db-1", 400,
       R"(unknown query parameter \"host_id\")"},
      {"/api/v1/nothing", 404, "not found"},
  };
  for (const Case& c : cases) {
    RawResponse r = Get(c.path);
    EXPECT_EQ(r.status, c.status) << c.path << ": " << r.body;
    EXPECT_TRUE(absl::StrContains(r.body, c.message))
        << c.path << ": " << r.body;
  }
  absl::StatusOr<RawResponse> wrong_method =
      RawExchange(sp_.metrics_addr,
                  RequestText("DELETE", "/api/v1/hosts",
                              {{"Authorization", "Bearer s3cret-token"}}));
  ASSERT_TRUE(wrong_method.ok());
  EXPECT_EQ(wrong_method->status, 405);
  EXPECT_EQ(wrong_method->Header("Allow"), "GET");
  absl::StatusOr<RawResponse> bad_body = RawExchange(
      sp_.metrics_addr,
      RequestText("POST", "/api/v1/predict",
                  {{"Authorization", "Bearer s3cret-token"}}, "{not json"));
  ASSERT_TRUE(bad_body.ok());
  EXPECT_EQ(bad_body->status, 400);
  EXPECT_TRUE(absl::StrContains(bad_body->body, "bad request body"))
      << bad_body->body;
  absl::StatusOr<RawResponse> too_big = RawExchange(
      sp_.metrics_addr, RequestText("POST", "/api/v1/predict",
                                    {{"Authorization", "Bearer s3cret-token"}},
                                    std::string(65537, ' ')));
  ASSERT_TRUE(too_big.ok());
  EXPECT_EQ(too_big->status, 413);
}

// The rollout plan's route, on two hosts whose kprobe_multi_return attach
// is worked out by hand (6.16.3, a PREEMPT_DYNAMIC build: c_visit 88.7 ns,
// batch 32, every thread without a shadow stack; server/query/
// plan_query_test.cc has the formulas): walk = 88.7 ns V + 2 us P + 20 ns N
// with P = N / 32 passes and V = 32 (P-1) P / 2 + (P-1) + N visits, plus
// patching 100 sites at 1.069 s / 48,712 each.
//   web-1: N = 3,200, P = 100, V = 161,699, PREEMPT_FULL: 16.8 ms, safe
//     under 2 s;
//   db-1: N = 240,000, P = 7,500, V = 899,880,000 + 7,499 + 240,000 =
//     900,127,499, PREEMPT_NONE: 79.86 s without yielding, 3.99x the 20 s
//     soft-lockup threshold: a lockup risk.
TEST_F(HttpApiTest, RolloutRouteAnswersThePlanAndRefusesBadParameters) {
  {
    auto stub = v1::TelemetryIngest::NewStub(
        grpc::CreateChannel(sp_.grpc_addr, grpc::InsecureChannelCredentials()));
    ReportStream s(stub.get());
    SampleHost h;
    h.host_id = "web-1";
    h.threads = 3200;
    h.preempt = v1::PREEMPT_MODE_FULL;
    h.role = "web";
    ASSERT_TRUE(s.Send(SampleReport(h, 1, absl::Now())));
    ASSERT_TRUE(s.WaitAcked(1));
    EXPECT_TRUE(s.Finish().ok());
  }
  const double patch = 100 * (1.069 / 48712);
  const double web = 88.7e-9 * 161699 + 2e-6 * 100 + 20e-9 * 3200 + patch;
  const double db = 88.7e-9 * 900127499 + 2e-6 * 7500 + 20e-9 * 240000 + patch;
  // The JSON text of each wave's max_latency_seconds, checked against the
  // hand values; the rest of the body is compared whole.
  auto numbers = [](const std::string& body) {
    std::vector<std::string> out;
    const std::string key = R"("max_latency_seconds":)";
    for (size_t at = body.find(key); at != std::string::npos;
         at = body.find(key, at + 1)) {
      const size_t from = at + key.size();
      out.push_back(body.substr(from, body.find(',', from) - from));
    }
    return out;
  };
  const std::string kind = "probe_kind=PROBE_KIND_KPROBE_MULTI_RETURN";
  RawResponse plan = Get("/api/v1/rollout?" + kind +
                         "&plan.max_latency=2s&plan.wave_host_ids=5");
  EXPECT_EQ(plan.status, 200) << plan.body;
  EXPECT_EQ(plan.Header("Content-Type"), "application/json");
  std::vector<std::string> n = numbers(plan.body);
  ASSERT_EQ(n.size(), 2u) << plan.body;
  EXPECT_NEAR(std::stod(n[0]), web, 1e-12);
  EXPECT_NEAR(std::stod(n[1]), db, 1e-9);
  EXPECT_NEAR(web, 16.80e-3, 0.01e-3);
  EXPECT_NEAR(db, 79.86, 0.01);
  const std::string lockup_action =
      "mitigate first, then attach: keep another fgraph user active (no "
      "shadow-stack walk), or attach on a preemptible kernel or one with the "
      "1024 batch; as they are, the walk reaches a soft-lockup or RCU-stall "
      "threshold, or half of it";
  EXPECT_EQ(
      plan.body,
      absl::StrCat(
          R"({"answers":[],"unknown_hosts":[],"matched_hosts":2,)",
          R"("plan":{"safe":1,"over_budget":0,)",
          R"("lockup_risk":1,"unknown":0,"waves":[)",
          R"({"number":1,"plan_class":"PLAN_CLASS_SAFE","hosts":1,)",
          R"("max_latency_seconds":)", n[0],
          R"(,"action":"attach: at most 16.8 ms, below the budget of 2.00 )",
          R"(s, no stall risk","host_ids":["web-1"]},)",
          R"({"number":2,"plan_class":"PLAN_CLASS_LOCKUP_RISK","hosts":1,)",
          R"("max_latency_seconds":)", n[1], R"(,"action":")", lockup_action,
          R"(","host_ids":["db-1"]}],"max_latency":"2s"}})"));

  // The same plan from a JSON body, and an explicit id nobody knows.
  absl::StatusOr<RawResponse> posted = RawExchange(
      sp_.metrics_addr,
      RequestText("POST", "/api/v1/rollout",
                  {{"Authorization", "Bearer s3cret-token"}},
                  R"({"hosts":{"host_ids":["db-1","nope"]},)"
                  R"("probe_kind":"PROBE_KIND_KPROBE_MULTI_RETURN",)"
                  R"("plan":{"max_latency":"100s"}})"));
  ASSERT_TRUE(posted.ok());
  EXPECT_EQ(posted->status, 200) << posted->body;
  std::vector<std::string> m = numbers(posted->body);
  ASSERT_EQ(m.size(), 1u) << posted->body;
  EXPECT_NEAR(std::stod(m[0]), db, 1e-9);
  EXPECT_EQ(posted->body,
            absl::StrCat(
                R"({"answers":[],"unknown_hosts":["nope"],"matched_hosts":1,)",
                R"("plan":{"safe":0,"over_budget":0,)",
                R"("lockup_risk":1,"unknown":0,"waves":[)",
                R"({"number":1,"plan_class":"PLAN_CLASS_LOCKUP_RISK",)",
                R"("hosts":1,"max_latency_seconds":)", m[0], R"(,"action":")",
                lockup_action, R"(","host_ids":[]}],"max_latency":"100s"}})"));

  // Refused as the other routes refuse (400 and the reason), each beside
  // the nearest request that is answered.
  auto error = [](const std::string& message) {
    return absl::StrCat(R"({"error":{"code":400,"message":")", message,
                        R"("}})");
  };
  // (The JSON printer escapes '>'.)
  const std::string required =
      error(R"(plan.max_latency: required, must be \u003e 0)");
  struct Case {
    std::string query;
    int status;
    std::string body;  // exact; empty: any 200 answer
  } cases[] = {
      {kind, 400, required},
      {kind + "&plan.max_latency=0s", 400, required},
      {kind + "&plan.max_latency=-1s", 400, required},
      {kind + "&plan.max_latency=0.000000001s", 200, ""},
      {kind + "&plan.max_latency=2s&plan.wave_host_ids=100001", 400,
       error("plan.wave_host_ids: at most 100000, got 100001")},
      {kind + "&plan.max_latency=2s&plan.wave_host_ids=100000", 200, ""},
      {kind + "&plan.max_latency=2s&what_if.latency_budget_seconds=1", 400,
       error("what_if.latency_budget_seconds: a plan's budget is "
             "plan.max_latency; leave it unset")},
      {kind + "&plan.max_latency=2s&what_if.threads=1000", 200, ""},
      {kind + "&plan.max_latency=2s&bogus=1", 400,
       error(R"(unknown query parameter \"bogus\")")},
  };
  for (const Case& c : cases) {
    RawResponse r = Get("/api/v1/rollout?" + c.query);
    EXPECT_EQ(r.status, c.status) << c.query << ": " << r.body;
    if (!c.body.empty()) EXPECT_EQ(r.body, c.body) << c.query;
  }
  // A 1 ns budget: web-1's 16.8 ms is over it.
  EXPECT_TRUE(absl::StrContains(
      Get("/api/v1/rollout?" + kind + "&plan.max_latency=0.000000001s").body,
      R"("safe":0,"over_budget":1,"lockup_risk":1)"));
  absl::StatusOr<RawResponse> empty = RawExchange(
      sp_.metrics_addr,
      RequestText("POST", "/api/v1/rollout",
                  {{"Authorization", "Bearer s3cret-token"}}, "{}"));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->status, 400);
  EXPECT_EQ(empty->body, required);
  // The token guards it as every /api/v1 route.
  EXPECT_EQ(Get("/api/v1/rollout?plan.max_latency=2s", "").status, 401);
}

TEST(HttpTlsTest, HttpsWithTheCertificateAndNothingInTheClear) {
  const std::string dir = NewTempDir("http-tls");
  auto mk = Subprocess::Start({"/bin/bash", Runfile("deploy/tls/make-certs.sh"),
                               dir + "/tls", "central.example"},
                              dir + "/make-certs.log");
  ASSERT_TRUE(mk.ok());
  ASSERT_EQ(*(*mk)->Wait(absl::Seconds(60)), 0)
      << *ReadFile(dir + "/make-certs.log");
  ServerProcess sp = Start(dir, {"--http_tls_cert=" + dir + "/tls/server.crt",
                                 "--http_tls_key=" + dir + "/tls/server.key"});
  ASSERT_NE(sp.process, nullptr);
  const std::string port =
      sp.metrics_addr.substr(sp.metrics_addr.rfind(':') + 1);
  auto curl = Subprocess::Start(
      {"/usr/bin/curl", "-sS", "--cacert", dir + "/tls/ca.crt", "-o",
       dir + "/metrics.txt", "-w", "%{http_code}", "--resolve",
       "central.example:" + port + ":127.0.0.1",
       "https://central.example:" + port + "/metrics"},
      dir + "/curl.log");
  ASSERT_TRUE(curl.ok());
  EXPECT_EQ(*(*curl)->Wait(absl::Seconds(30)), 0)
      << *ReadFile(dir + "/curl.log");
  EXPECT_EQ(*ReadFile(dir + "/curl.log"), "200");
  EXPECT_TRUE(absl::StrContains(*ReadFile(dir + "/metrics.txt"),
                                "tracehealth_ingest_reports_total"));
  // Plain HTTP on the TLS port gets no HTTP answer.
  absl::StatusOr<RawResponse> plain = RawExchange(
      sp.metrics_addr, RequestText("GET", "/metrics"), absl::Seconds(5));
  EXPECT_FALSE(plain.ok() && plain->status == 200);
  // A certificate that is not the server's CA's is refused by the client.
  auto untrusted = Subprocess::Start({"/usr/bin/curl", "-sS", "-o", "/dev/null",
                                      "https://127.0.0.1:" + port + "/metrics"},
                                     dir + "/curl2.log");
  ASSERT_TRUE(untrusted.ok());
  EXPECT_NE(*(*untrusted)->Wait(absl::Seconds(30)), 0);
}

TEST(HttpTlsTest, AnUnreadableOrBadCertificateStopsTheStart) {
  const std::string dir = NewTempDir("http-tls-bad");
  ASSERT_TRUE(WriteFile(dir + "/bad.pem", "not a certificate\n").ok());
  for (const auto& [flags, want] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--http_tls_cert=" + dir + "/missing.crt",
             "--http_tls_key=" + dir + "/bad.pem"},
            "HTTP TLS: cannot read --http_tls_cert"},
           {{"--http_tls_cert=" + dir + "/bad.pem",
             "--http_tls_key=" + dir + "/bad.pem"},
            "check the TLS certificate and key"},
       }) {
    std::vector<std::string> argv = {
        Runfile("server/tracehealth-server"), "--data_dir=" + dir,
        "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto p = Subprocess::Start(argv, dir + "/server.log");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(*(*p)->Wait(absl::Seconds(30)), 1);
    EXPECT_TRUE(absl::StrContains(*ReadFile(dir + "/server.log"), want))
        << *ReadFile(dir + "/server.log");
  }
}

}  // namespace
}  // namespace tracehealth::testing
