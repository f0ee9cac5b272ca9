// Latency of one gate check on this machine, as tracehealthctl sees it: a
// gRPC call over the unix socket to a GateServer, which reads the moving
// inputs again (/proc/loadavg, /proc/stat, /proc/uptime, tracefs), runs the
// attach model, judges it and computes the mitigations.
//
// The host is a generated tree: 6.16 PREEMPT_NONE, 240,000 threads, fgraph
// inactive, tracefs with two instances and 80,000 traceable functions (a
// distribution kernel's count). Request shapes: a graph tracer with no
// sites (unsafe: every mitigation computed), a safe kind, a prefix and a
// glob filter (counted once, then cached), and a new filter each call
// (80,000 lines counted every time), plus the agent's first publish (which
// reads and sorts the list, on its loop, not in a check) and the first
// filter check. Each shape: --calls calls after --warmup.
//
// Usage: gate_benchmark [--calls=N] [--warmup=N]
// Target: p99 < 5 ms.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/gate/gate_server.h"
#include "agent/gate/gate_service.h"
#include "common/procfs/host_fs.h"
#include "grpcpp/grpcpp.h"
#include "proto/tracehealth/v1/gate.grpc.pb.h"

ABSL_FLAG(int, calls, 2000, "Timed calls per request shape.");
ABSL_FLAG(int, warmup, 50, "Untimed calls first.");
ABSL_FLAG(int, functions, 80000, "Lines of available_filter_functions.");

namespace tracehealth::agent {
namespace {

constexpr char kTracefs[] = "/sys/kernel/tracing";

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::trunc) << text;
}

// The host tree under `root`.
void MakeHost(const std::string& root, int functions) {
  Write(root + "/proc/loadavg", "2.10 2.05 1.98 41/240000 812345\n");
  std::string stat = "cpu  1 2 3 4 5 6 7 0 0 0\n";
  for (int c = 0; c < 64; ++c) {
    absl::StrAppend(&stat, "cpu", c, " 1 2 3 4 5 6 7 0 0 0\n");
  }
  absl::StrAppend(&stat, "intr 123456789\nctxt 987654321\nbtime 1700000000\n",
                  "processes 1953211\nprocs_running 41\nprocs_blocked 0\n");
  Write(root + "/proc/stat", stat);
  Write(root + "/proc/uptime", "84240.12 5000000.00\n");
  const std::string t = root + kTracefs;
  Write(t + "/current_tracer", "nop\n");
  Write(t + "/function_profile_enabled", "0\n");
  Write(t + "/dynamic_events", "");
  for (const char* inst : {"a", "b"}) {
    Write(absl::StrCat(t, "/instances/", inst, "/current_tracer"), "nop\n");
  }
  const char* prefixes[] = {"tcp_",  "vfs_",   "ext4_", "kmem_", "sched_",
                            "ksys_", "do_sys", "xfs_",  "path_", "net_"};
  std::string list;
  for (int i = 0; i < functions; ++i) {
    absl::StrAppend(&list, prefixes[i % 10], "fn_", i,
                    i % 7 == 0 ? " [mod_x]\n" : "\n");
  }
  Write(t + "/available_filter_functions", list);
}

v1::HostSnapshot Snapshot(int functions) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.16.12-cloud-amd64");
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_NONE);
  s.mutable_kernel()->set_preempt_dynamic(true);
  s.mutable_threads()->set_total(240000);
  s.mutable_fgraph()->set_tracefs_path(kTracefs);
  s.mutable_fgraph()->set_active(false);
  s.mutable_fgraph()->set_available_filter_functions(functions);
  s.mutable_thresholds()->set_watchdog_thresh_seconds(10);
  s.mutable_thresholds()->set_rcu_cpu_stall_timeout_seconds(21);
  return s;
}

struct Shape {
  const char* name;
  v1::ProbeKind kind;
  std::string filter;  // "" : none; "NEW" : a fresh pattern each call
  uint64_t functions = 0;
};

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

double OneCall(v1::Gate::Stub& stub, const v1::CheckRequest& req) {
  grpc::ClientContext ctx;
  v1::CheckResponse resp;
  const auto t0 = std::chrono::steady_clock::now();
  grpc::Status st = stub.Check(&ctx, req, &resp);
  const auto t1 = std::chrono::steady_clock::now();
  if (!st.ok()) {
    std::fprintf(stderr, "check failed: %s\n", st.error_message().c_str());
    std::exit(1);
  }
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

v1::CheckRequest RequestOf(const Shape& s, int i) {
  v1::CheckRequest r;
  r.set_probe_kind(s.kind);
  r.mutable_max_latency()->set_seconds(2);
  if (s.functions > 0) r.set_functions(s.functions);
  if (s.filter == "NEW") {
    r.set_filter(absl::StrCat("*fn_", i, "*"));
  } else if (!s.filter.empty()) {
    r.set_filter(s.filter);
  }
  return r;
}

int Run() {
  const int calls = absl::GetFlag(FLAGS_calls);
  const int warmup = absl::GetFlag(FLAGS_warmup);
  const int functions = absl::GetFlag(FLAGS_functions);
  const std::string dir =
      absl::StrCat(std::filesystem::temp_directory_path().string(),
                   "/gate_benchmark_", getpid());
  MakeHost(dir + "/root", functions);
  HostFs fs(dir + "/root");
  GateService service(&fs, GateServiceOptions());
  const auto p0 = std::chrono::steady_clock::now();
  service.Publish(Snapshot(functions));  // reads and sorts the list
  const double publish_us = std::chrono::duration<double, std::micro>(
                                std::chrono::steady_clock::now() - p0)
                                .count();
  GateServerOptions so;
  so.socket_path = dir + "/gate.sock";
  auto server = GateServer::Start(so, &service);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  auto stub = v1::Gate::NewStub(grpc::CreateChannel(
      "unix:" + so.socket_path, grpc::InsecureChannelCredentials()));

  std::printf("gate_benchmark: %d calls per shape, %d traceable functions\n",
              calls, functions);
  std::printf("%-44s %8.0f us\n", "first publish (reads the list, once)",
              publish_us);
  v1::CheckRequest first =
      RequestOf({"", v1::PROBE_KIND_KPROBE_MULTI_RETURN, "tcp_*"}, 0);
  OneCall(*stub, RequestOf({"", v1::PROBE_KIND_FENTRY_FEXIT, ""}, 0));
  std::printf("%-44s %8.0f us\n", "first filter check", OneCall(*stub, first));
  const Shape shapes[] = {
      {"function_graph, no sites (unsafe)",
       v1::PROBE_KIND_FUNCTION_GRAPH_TRACER, ""},
      {"fentry --functions=10 (safe)", v1::PROBE_KIND_FENTRY_FEXIT, "", 10},
      {"kprobe_multi_return --filter=tcp_*", v1::PROBE_KIND_KPROBE_MULTI_RETURN,
       "tcp_*"},
      {"kprobe_multi_return --filter='*fn_1* !*:mod:*'",
       v1::PROBE_KIND_KPROBE_MULTI_RETURN, "*fn_1* !*:mod:*"},
      {"kprobe_multi_return, a new filter each call",
       v1::PROBE_KIND_KPROBE_MULTI_RETURN, "NEW"},
  };
  std::printf("%-44s %8s %8s %8s\n", "shape", "p50 us", "p99 us", "max us");
  double worst_p99 = 0;
  for (const Shape& s : shapes) {
    for (int i = 0; i < warmup; ++i) OneCall(*stub, RequestOf(s, -1 - i));
    std::vector<double> us;
    us.reserve(calls);
    for (int i = 0; i < calls; ++i)
      us.push_back(OneCall(*stub, RequestOf(s, i)));
    const double p99 = Percentile(us, 0.99);
    worst_p99 = std::max(worst_p99, p99);
    std::printf("%-44s %8.0f %8.0f %8.0f\n", s.name, Percentile(us, 0.5), p99,
                *std::max_element(us.begin(), us.end()));
  }
  std::printf("target: p99 < 5000 us; worst p99 %.0f us\n", worst_p99);
  (*server)->Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return 0;
}

}  // namespace
}  // namespace tracehealth::agent

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return tracehealth::agent::Run();
}
