#include "tools/loadgen/sample_report.h"

#include "absl/strings/str_format.h"
#include "common/models/evaluate.h"

namespace tracehealth::server {

v1::HostSnapshot SampleSnapshot(const SampleHost& host) {
  v1::HostSnapshot s;
  v1::KernelInfo* k = s.mutable_kernel();
  k->set_release(host.kernel_release);
  k->set_version("#1 SMP PREEMPT_DYNAMIC");
  k->set_arch("x86_64");
  k->set_preempt_mode(host.preempt);
  k->set_preempt_source("debugfs sched/preempt");
  k->set_preempt_dynamic(true);
  k->set_config_source("/proc/config.gz");
  k->set_config_kasan(false);
  k->set_config_kasan_generic(false);
  k->set_config_kasan_vmalloc(false);
  k->set_config_page_owner(false);
  k->set_config_stackdepot(true);
  k->set_config_stackdepot_max_frames(64);
  k->set_config_function_graph_tracer(true);
  k->set_config_fprobe(true);
  k->set_page_size(4096);
  v1::ThreadCounts* t = s.mutable_threads();
  t->set_total(host.threads);
  t->set_running(8);
  t->set_forks_since_boot(host.threads * 3);
  t->set_uptime_seconds(86400 * 12);
  v1::FgraphState* fg = s.mutable_fgraph();
  fg->set_tracefs_path("/sys/kernel/tracing");
  fg->set_active(host.fgraph_active);
  if (host.fgraph_active) {
    v1::FgraphUser* u = fg->add_users();
    u->set_kind(v1::FgraphUser::KIND_FUNCTION_GRAPH_TRACER);
    fg->set_null_threads_bound(0);
    fg->set_null_threads_basis("fgraph active");
  } else {
    fg->set_null_threads_bound(host.threads);
    fg->set_null_threads_basis("never active since boot");
  }
  fg->set_available_filter_functions(61234);
  fg->set_enabled_functions(0);
  v1::Thresholds* th = s.mutable_thresholds();
  th->set_watchdog_thresh_seconds(10);
  th->set_softlockup_panic(false);
  th->set_rcu_cpu_stall_timeout_seconds(21);
  th->set_panic_on_rcu_stall(false);
  s.mutable_cpus()->set_online(host.cpus);
  s.mutable_cpus()->set_invlpgb(false);
  s.mutable_cpus()->set_model_name("Intel(R) Xeon(R) Platinum 8480+");
  v1::StackDepotStats* sd = s.mutable_stackdepot();
  sd->set_pools(120);
  sd->set_persistent_count(9000);
  sd->set_persistent_bytes(9000 * 272);
  sd->set_max_pools(8192);
  sd->set_max_pools_source("default");
  v1::VmallocState* vm = s.mutable_vmalloc();
  vm->set_unpurged_areas(40);
  vm->set_unpurged_bytes(40 * 65536);
  vm->set_areas(5200);
  vm->set_vmalloc_total_bytes(34359738367ULL);
  vm->set_vmalloc_used_bytes(512ULL << 20);
  return s;
}

v1::HostReport SampleReport(const SampleHost& host, uint64_t seq,
                            absl::Time observed_at) {
  v1::HostReport r;
  r.set_host_id(host.host_id);
  r.set_seq(seq);
  int64_t ns = absl::ToUnixNanos(observed_at);
  r.mutable_observed_at()->set_seconds(ns / 1000000000);
  r.mutable_observed_at()->set_nanos(static_cast<int32_t>(ns % 1000000000));
  r.set_agent_version("1.0.0");
  r.set_model_version(kModelVersion);
  (*r.mutable_labels())["role"] = host.role;
  (*r.mutable_labels())["rack"] = host.rack;
  r.set_interval_seconds(30);
  *r.mutable_snapshot() = SampleSnapshot(host);
  *r.mutable_predictions() = PredictAll(r.snapshot());  // as the agent sends it
  r.mutable_health()->set_cycle_seconds(0.012);
  r.mutable_health()->set_cycle_cpu_seconds(0.008);
  return r;
}

SampleHost FleetHost(int i) {
  static const char* const kKernels[] = {"6.12.20", "6.16.3", "6.18.40",
                                         "6.19.2"};
  static const v1::PreemptMode kModes[] = {
      v1::PREEMPT_MODE_NONE, v1::PREEMPT_MODE_VOLUNTARY, v1::PREEMPT_MODE_FULL,
      v1::PREEMPT_MODE_LAZY};
  static const char* const kRoles[] = {"db", "web", "batch", "cache"};
  SampleHost h;
  h.host_id = absl::StrFormat("host-%06d", i);
  h.threads = 2000 + static_cast<uint64_t>((i * 7919) % 400000);
  h.kernel_release = kKernels[i % 4];
  h.preempt = kModes[(i / 4) % 4];
  h.fgraph_active = i % 10 == 3;
  h.cpus = 16 << (i % 4);
  h.role = kRoles[(i / 16) % 4];
  h.rack = absl::StrFormat("r%d", i % 20);
  return h;
}

v1::ThresholdCheck* AddCheck(
    google::protobuf::RepeatedPtrField<v1::ThresholdCheck>* checks,
    v1::ThresholdCheck::Kind kind, double margin, bool applies) {
  v1::ThresholdCheck* c = checks->Add();
  c->set_kind(kind);
  c->set_margin(margin);
  c->set_applies(applies);
  return c;
}

}  // namespace tracehealth::server
