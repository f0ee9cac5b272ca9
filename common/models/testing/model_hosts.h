// Snapshots the models' tests share: the seed hosts and the smallest
// snapshot each model needs.
#ifndef TRACEHEALTH_COMMON_MODELS_TESTING_MODEL_HOSTS_H_
#define TRACEHEALTH_COMMON_MODELS_TESTING_MODEL_HOSTS_H_

#include <cstdint>
#include <string>

#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::testing {

// `threads` threads on `release` with preemption `mode`; fgraph inactive.
inline v1::HostSnapshot FgraphHost(const std::string& release,
                                   v1::PreemptMode mode, uint64_t threads) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release(release);
  s.mutable_kernel()->set_preempt_mode(mode);
  s.mutable_threads()->set_total(threads);
  s.mutable_fgraph()->set_active(false);
  return s;
}

// FgraphHost with 60,000 lines in available_filter_functions (the fgraph
// attach tests' host).
inline v1::HostSnapshot FgraphAttachHost(const std::string& release,
                                         v1::PreemptMode mode,
                                         uint64_t threads) {
  v1::HostSnapshot s = FgraphHost(release, mode, threads);
  s.mutable_fgraph()->set_available_filter_functions(60000);
  return s;
}

// Seed 004's host: 256 CPUs, generic KASAN with KASAN_VMALLOC, 4 KiB pages,
// PREEMPT_VOLUNTARY; 2,805 flushes = 2,804 pending areas owning a whole
// shadow page + the final one.
inline v1::HostSnapshot Seed004Host(const std::string& release) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release(release);
  s.mutable_kernel()->set_config_kasan_vmalloc(true);
  s.mutable_kernel()->set_page_size(4096);
  s.mutable_kernel()->set_preempt_mode(v1::PREEMPT_MODE_VOLUNTARY);
  s.mutable_cpus()->set_online(256);
  s.mutable_vmalloc()->set_unpurged_shadow_page_areas(2804);
  s.mutable_vmalloc()->set_unpurged_areas(3100);
  return s;
}

// A 6.18.48 KASAN kernel with the stack depot, `pools` in use.
inline v1::HostSnapshot KasanDepotHost(uint64_t pools) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release("6.18.48");
  s.mutable_kernel()->set_config_kasan(true);
  s.mutable_kernel()->set_config_stackdepot(true);
  s.mutable_stackdepot()->set_pools(pools);
  return s;
}

}  // namespace tracehealth::testing

#endif  // TRACEHEALTH_COMMON_MODELS_TESTING_MODEL_HOSTS_H_
