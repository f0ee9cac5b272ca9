// Fleet-wide PredictAttach in process (prints figures; not a timed test):
// the index filled with N sample hosts (tools/loadgen/sample_report.h), then
// DoPredictAttach over every host with a what-if (threads=400000), with
// and without a rollout plan, on 1 and 2 scan threads. Prints the CPU time
// of the process per query (robust to other load on the machine) and the
// wall-clock p50/p99. No gRPC and no store: the scan and the models only
// (the ten answers are predicted from their records, not explained).
//
//   bazel run -c opt //server/query:predict_attach_benchmark -- --hosts=100000
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/time/clock.h"
#include "server/index/host_index.h"
#include "server/query/query_service.h"
#include "tools/loadgen/sample_report.h"

ABSL_FLAG(int32_t, hosts, 100000, "Hosts in the index");
ABSL_FLAG(int32_t, queries, 40, "Queries per kind");

namespace tracehealth::server {
namespace {

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

void Run(const char* what, const QueryService& service,
         const v1::PredictAttachRequest& req, int n) {
  std::vector<double> ms;
  v1::PredictAttachResponse resp;
  const double cpu0 = CpuSeconds();
  for (int i = 0; i < n; ++i) {
    resp.Clear();
    const absl::Time t0 = absl::Now();
    grpc::Status st = service.DoPredictAttach(req, &resp);
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", what, st.error_message().c_str());
      return;
    }
  }
  const double cpu_ms = (CpuSeconds() - cpu0) * 1e3 / n;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))];
  };
  std::printf(
      "%-36s n=%d matched=%u CPU %.2f ms/query, wall p50 %.2f ms p99 %.2f "
      "ms\n",
      what, n, resp.matched_hosts(), cpu_ms, at(0.5), at(0.99));
  if (resp.has_plan()) {
    std::printf("  plan: %u safe, %u over budget, %u lockup risk, %u unknown\n",
                resp.plan().safe(), resp.plan().over_budget(),
                resp.plan().lockup_risk(), resp.plan().unknown());
  }
}

int Main() {
  const int hosts = absl::GetFlag(FLAGS_hosts);
  const int n = absl::GetFlag(FLAGS_queries);
  HostIndex index;
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  std::vector<CommittedReport> batch;
  for (int i = 0; i < hosts; ++i) {
    batch.push_back(
        {StoredReport::Of(SampleReport(FleetHost(i), 1, now)), now});
    if (batch.size() == 2000 || i + 1 == hosts) {
      index.Apply(batch);
      batch.clear();
    }
  }
  v1::PredictAttachRequest what_if;
  what_if.set_probe_kind(v1::PROBE_KIND_KPROBE_MULTI_RETURN);
  what_if.mutable_what_if()->set_threads(400000);
  what_if.set_limit(10);
  v1::PredictAttachRequest plan = what_if;
  plan.mutable_plan()->mutable_max_latency()->set_seconds(2);
  std::printf("%d hosts\n", hosts);
  for (int threads : {1, 2}) {
    QueryOptions o;
    o.now = [now] { return now; };
    o.scan_threads = threads;
    QueryService service(&index, nullptr, nullptr, o);
    std::printf("scan threads: %d\n", threads);
    Run("  fleet what-if", service, what_if, n);
    Run("  fleet plan + what-if", service, plan, n);
  }
  return 0;
}

}  // namespace
}  // namespace tracehealth::server

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tracehealth::server::Main();
}
