#include "agent/collect/collector.h"

#include <functional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/collect/thread_counts.h"
#include "agent/parsers/cpu.h"
#include "agent/parsers/preempt.h"
#include "agent/parsers/stackdepot.h"
#include "agent/parsers/vmallocinfo.h"
#include "common/kernel/release.h"
#include "common/models/stackdepot/depot_pools.h"
#include "common/models/stackdepot/stack_depot.h"
#include "common/models/vmap/kasan_shadow.h"
#include "common/procfs/proc.h"
#include "common/proto_time.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSmallFile = 64 * 1024;
constexpr uint64_t kVmallocInfoMax = 256ull << 20;
constexpr size_t kMountsMax = 4 << 20;
constexpr char kTracefsDefault[] = "/sys/kernel/tracing";

}  // namespace

Collector::Collector(const HostFs* fs, CollectorOptions options,
                     std::function<absl::Time()> clock)
    : fs_(fs),
      options_(std::move(options)),
      clock_(std::move(clock)),
      fgraph_(fs, options_.features, options_.fgraph),
      memory_(options_.state_dir),
      depot_history_(options_.state_dir, options_.depot_history_max,
                     options_.depot_sample_spacing) {
  absl::Status s = memory_.Load();
  if (!s.ok()) warnings_.push_back(std::string(s.message()));
  s = depot_history_.Load();
  if (!s.ok()) warnings_.push_back(std::string(s.message()));
}

std::vector<std::string> Collector::TakeWarnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

void Collector::LocateMounts(absl::Time now, Unknowns* unknown) {
  // Without tracefs, one stat() per cycle tells whether it has been mounted
  // at its usual place since. (A tracefs that goes away makes its reads
  // fail, so the fgraph state is unknown until the next read here.)
  const bool stale =
      !last_mounts_.has_value() ||
      now - *last_mounts_ >= options_.mounts_interval ||
      (!tracefs_.has_value() &&
       fs_->Exists(absl::StrCat(kTracefsDefault, "/current_tracer")));
  if (stale) {
    last_mounts_ = now;
    tracefs_.reset();
    debugfs_.reset();
    mounts_error_.clear();
    // PID 1's view first: in a container that shares the host's PID
    // namespace and mounts the host's /proc and /sys under --root, the
    // agent's own /proc/mounts names container paths, while PID 1's names
    // the host's.
    absl::StatusOr<std::string> text =
        fs_->ReadFile("/proc/1/mounts", kMountsMax);
    if (!text.ok()) text = fs_->ReadFile("/proc/mounts", kMountsMax);
    absl::StatusOr<TracingMounts> mounts =
        text.ok() ? ParseMounts(*text)
                  : absl::StatusOr<TracingMounts>(text.status());
    if (mounts.ok()) {
      debugfs_ = mounts->debugfs;
      tracefs_ = mounts->tracefs;
      if (!tracefs_.has_value() && debugfs_.has_value()) {
        // tracefs is automounted at debugfs/tracing.
        std::string auto_path = *debugfs_ + "/tracing";
        if (fs_->Exists(auto_path + "/current_tracer")) tracefs_ = auto_path;
      }
    } else {
      mounts_error_ = std::string(mounts.status().message());
    }
  }
  if (!mounts_error_.empty()) AddUnknown(unknown, "mounts", mounts_error_);
}

void Collector::CollectPreempt(const std::optional<std::string>& debugfs,
                               v1::KernelInfo* kernel, Unknowns* unknown) {
  // A PREEMPT_RT build can also be PREEMPT_DYNAMIC (Debian's -rt kernels
  // from 6.18): its sched/preempt then reads "(full) lazy", the dynamic
  // choice among the other modes, while the kernel runs with RT's sleeping
  // locks. The build decides: the config, else the version string.
  if (facts_->config_mode == v1::PREEMPT_MODE_RT) {
    kernel->set_preempt_mode(v1::PREEMPT_MODE_RT);
    kernel->set_preempt_source(facts_->config_mode_source);
    return;
  }
  if (facts_->version_mode == v1::PREEMPT_MODE_RT) {
    kernel->set_preempt_mode(v1::PREEMPT_MODE_RT);
    kernel->set_preempt_source("kernel version string");
    return;
  }
  std::string debugfs_error = "debugfs not mounted";
  if (debugfs.has_value()) {
    absl::StatusOr<std::string> text =
        fs_->ReadFile(*debugfs + "/sched/preempt", kSmallFile);
    absl::StatusOr<v1::PreemptMode> mode =
        text.ok() ? ParseSchedPreempt(*text)
                  : absl::StatusOr<v1::PreemptMode>(text.status());
    if (mode.ok()) {
      kernel->set_preempt_mode(*mode);
      kernel->set_preempt_source("debugfs sched/preempt");
      return;
    }
    debugfs_error = std::string(mode.status().message());
  }
  if (facts_->config_mode.has_value()) {
    kernel->set_preempt_mode(*facts_->config_mode);
    kernel->set_preempt_source(facts_->config_mode_source);
    return;
  }
  if (facts_->version_mode.has_value()) {
    kernel->set_preempt_mode(*facts_->version_mode);
    kernel->set_preempt_source("kernel version string");
    return;
  }
  AddUnknown(unknown, "kernel.preempt_mode",
             absl::StrCat(debugfs_error,
                          "; no config, and the version string does not name "
                          "the mode"));
}

void Collector::CollectThreads(v1::HostSnapshot* s) {
  v1::ThreadCounts* t = s->mutable_threads();
  Unknowns* unknown = s->mutable_unknown();
  absl::StatusOr<std::string> stat = ReadThreadCounts(*fs_, t, unknown);

  // Boot identity for the fgraph memory.
  BootIdentity boot;
  absl::StatusOr<std::string> id =
      fs_->ReadFile("/proc/sys/kernel/random/boot_id", kSmallFile);
  if (id.ok()) boot.boot_id = std::string(absl::StripAsciiWhitespace(*id));
  if (stat.ok()) {
    absl::StatusOr<int64_t> btime = ParseStatBtime(*stat);
    if (btime.ok()) boot.btime = *btime;
  }

  boot_ = boot;
  v1::FgraphState* fg = s->mutable_fgraph();
  std::optional<bool> active;
  if (fg->has_active()) active = fg->active();
  std::optional<uint64_t> total, forks;
  if (t->has_total()) total = t->total();
  if (t->has_forks_since_boot()) forks = t->forks_since_boot();
  absl::Status persist;
  std::optional<NullBound> bound =
      memory_.Observe(boot, active, clock_(), total, forks, &persist);
  if (!persist.ok()) warnings_.push_back(std::string(persist.message()));
  if (memory_.last_active_at().has_value()) {
    *fg->mutable_last_active_at() = ToProto(*memory_.last_active_at());
    fg->set_forks_at_last_active(*memory_.forks_at_last_active());
  }
  if (bound.has_value()) {
    fg->set_null_threads_bound(bound->bound);
    fg->set_null_threads_basis(bound->basis);
  } else {
    AddUnknown(unknown, "fgraph.null_threads_bound",
               "thread count unknown and fgraph not active");
  }
}

void Collector::CollectThresholds(v1::Thresholds* t, Unknowns* unknown) {
  auto read_int = [&](const char* path) -> absl::StatusOr<int64_t> {
    absl::StatusOr<std::string> text = fs_->ReadFile(path, kSmallFile);
    if (!text.ok()) return text.status();
    absl::StatusOr<int64_t> v = ParseSingleInteger(*text);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", v.status().message()));
    }
    if (*v < 0 || *v > 1000000) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": implausible value ", *v));
    }
    return v;
  };
  struct Threshold {
    const char* path;
    const char* input;
    std::function<void(int64_t)> set;
  };
  const Threshold thresholds[] = {
      {"/proc/sys/kernel/watchdog_thresh", "thresholds.watchdog_thresh_seconds",
       [t](int64_t v) {
         t->set_watchdog_thresh_seconds(static_cast<uint32_t>(v));
       }},
      {"/proc/sys/kernel/softlockup_panic", "thresholds.softlockup_panic",
       [t](int64_t v) { t->set_softlockup_panic(v != 0); }},
      {"/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout",
       "thresholds.rcu_cpu_stall_timeout_seconds",
       [t](int64_t v) {
         t->set_rcu_cpu_stall_timeout_seconds(static_cast<uint32_t>(v));
       }},
      {"/proc/sys/kernel/panic_on_rcu_stall", "thresholds.panic_on_rcu_stall",
       [t](int64_t v) { t->set_panic_on_rcu_stall(v != 0); }},
      // Absent without CONFIG_DETECT_HUNG_TASK: unknown, not the default.
      {"/proc/sys/kernel/hung_task_timeout_secs",
       "thresholds.hung_task_timeout_seconds",
       [t](int64_t v) {
         t->set_hung_task_timeout_seconds(static_cast<uint32_t>(v));
       }},
      {"/proc/sys/kernel/hung_task_panic", "thresholds.hung_task_panic",
       [t](int64_t v) { t->set_hung_task_panic(v != 0); }},
  };
  for (const Threshold& th : thresholds) {
    absl::StatusOr<int64_t> v = read_int(th.path);
    if (v.ok()) {
      th.set(*v);
    } else {
      AddUnknown(unknown, th.input, v.status().message());
    }
  }
}

void Collector::CollectCpus(v1::CpuInfo* cpus, Unknowns* unknown) {
  absl::StatusOr<std::string> text =
      fs_->ReadFile("/sys/devices/system/cpu/online", kSmallFile);
  absl::StatusOr<uint32_t> n = text.ok()
                                   ? ParseCpuListCount(*text)
                                   : absl::StatusOr<uint32_t>(text.status());
  if (n.ok()) {
    cpus->set_online(*n);
  } else {
    AddUnknown(unknown, "cpus.online", n.status().message());
  }
  if (facts_->possible_cpus.has_value()) {
    cpus->set_possible(*facts_->possible_cpus);
  } else {
    AddUnknown(unknown, "cpus.possible", facts_->possible_error);
  }
  if (facts_->invlpgb.has_value()) {
    cpus->set_invlpgb(*facts_->invlpgb);
    if (facts_->ibt.has_value()) cpus->set_ibt(*facts_->ibt);
    if (facts_->hypervisor.has_value()) {
      cpus->set_hypervisor(*facts_->hypervisor);
    } else {
      AddUnknown(unknown, "cpus.hypervisor", facts_->hypervisor_error);
    }
  } else {
    AddUnknown(unknown, "cpus.invlpgb", facts_->cpuinfo_error);
  }
  if (facts_->model_name.has_value()) {
    cpus->set_model_name(*facts_->model_name);
  }
  if (facts_->midr.has_value()) {
    cpus->set_midr_el1(*facts_->midr);
  } else if (!facts_->midr_error.empty()) {
    AddUnknown(unknown, "cpus.midr_el1", facts_->midr_error);
  }
  struct Cache {
    const absl::StatusOr<uint64_t>* bytes;
    const char* input;
    void (v1::CpuInfo::*set)(uint64_t);
  };
  for (const Cache& c : {Cache{&facts_->caches.l1d, "cpus.l1d_cache_bytes",
                               &v1::CpuInfo::set_l1d_cache_bytes},
                         Cache{&facts_->caches.l2, "cpus.l2_cache_bytes",
                               &v1::CpuInfo::set_l2_cache_bytes},
                         Cache{&facts_->caches.l3, "cpus.l3_cache_bytes",
                               &v1::CpuInfo::set_l3_cache_bytes}}) {
    if (c.bytes->ok()) {
      (cpus->*c.set)(**c.bytes);
    } else {
      AddUnknown(unknown, c.input, c.bytes->status().message());
    }
  }
}

void Collector::CollectStackDepot(const std::optional<std::string>& debugfs,
                                  absl::Time now, v1::HostSnapshot* s) {
  v1::StackDepotStats* d = s->mutable_stackdepot();
  Unknowns* unknown = s->mutable_unknown();
  const v1::KernelInfo& k = s->kernel();
  // The pool budget: stack_depot_max_pools= as the kernel applies it, else
  // the default for the page size.
  const bool param =
      facts_->release.has_value() &&
      options_.features
          ->Has(feature::kStackdepotMaxPoolsParam, *facts_->release)
          .present;
  const uint32_t page = k.has_page_size() ? k.page_size() : 0;
  const std::optional<uint64_t> cmdline_pools =
      k.has_cmdline() ? MaxPoolsFromCmdline(k.cmdline(), DepotPoolLimit(page))
                      : std::nullopt;
  if (param && cmdline_pools.has_value()) {
    d->set_max_pools(*cmdline_pools);
    d->set_max_pools_source("cmdline stack_depot_max_pools=");
  } else {
    d->set_max_pools(DepotDefaultMaxPools(page));
    d->set_max_pools_source(param ? "kernel default" : "hard cap before 6.17");
  }
  if (k.has_config_stackdepot() && !k.config_stackdepot()) {
    AddNotApplicable(s->mutable_not_applicable(), "stackdepot.pools",
                     "CONFIG_STACKDEPOT is off");
    return;
  }
  if (!debugfs.has_value()) {
    AddUnknown(unknown, "stackdepot.pools", "debugfs not mounted");
    return;
  }
  std::string path = *debugfs + "/stackdepot/stats";
  absl::StatusOr<std::string> text = fs_->ReadFile(path, kSmallFile);
  absl::StatusOr<StackDepotCounters> c =
      text.ok() ? ParseStackDepotStats(*text)
                : absl::StatusOr<StackDepotCounters>(text.status());
  if (!c.ok()) {
    std::string reason(c.status().message());
    if (absl::IsNotFound(c.status()) && facts_->release.has_value() &&
        !options_.features->Has(feature::kStackdepotStats, *facts_->release)
             .present) {
      reason = absl::StrCat(path, ": not provided before 6.8");
    }
    AddUnknown(unknown, "stackdepot.pools", reason);
    return;
  }
  d->set_pools(c->pools);
  if (c->refcounted_allocations) {
    d->set_refcounted_allocations(*c->refcounted_allocations);
  }
  if (c->refcounted_frees) d->set_refcounted_frees(*c->refcounted_frees);
  if (c->refcounted_in_use) d->set_refcounted_in_use(*c->refcounted_in_use);
  if (c->freelist_size) d->set_freelist_size(*c->freelist_size);
  if (c->persistent_count) d->set_persistent_count(*c->persistent_count);
  if (c->persistent_bytes) d->set_persistent_bytes(*c->persistent_bytes);

  absl::Status persist;
  for (v1::DepotSample& sample : depot_history_.Observe(
           boot_, now, c->pools, c->persistent_bytes.value_or(0), &persist)) {
    *s->add_depot_history() = std::move(sample);
  }
  if (!persist.ok()) warnings_.push_back(std::string(persist.message()));
}

void Collector::CollectVmalloc(absl::Time now, v1::HostSnapshot* s) {
  v1::VmallocState* v = s->mutable_vmalloc();
  Unknowns* unknown = s->mutable_unknown();
  const v1::KernelInfo& k = s->kernel();
  const uint64_t page = k.has_page_size() ? k.page_size() : 0;
  if (!k.has_config_kasan_vmalloc()) {
    AddUnknown(unknown, "vmalloc.unpurged_areas",
               "/proc/vmallocinfo not read: CONFIG_KASAN_VMALLOC unknown (no "
               "kernel config)");
  } else if (!k.config_kasan_vmalloc()) {
    AddNotApplicable(s->mutable_not_applicable(), "vmalloc.unpurged_areas",
                     "CONFIG_KASAN_VMALLOC is off: no vmalloc shadow to purge "
                     "(/proc/vmallocinfo not read)");
  } else if (options_.vmallocinfo_interval == absl::InfiniteDuration()) {
    AddUnknown(unknown, "vmalloc.unpurged_areas",
               "/proc/vmallocinfo not read (vmallocinfo interval inf)");
  } else {
    if (!last_vmallocinfo_.has_value() ||
        now - *last_vmallocinfo_ >= options_.vmallocinfo_interval) {
      ReadVmallocinfo(page, PagesPerShadowPage(KasanModeOf(k)));
      last_vmallocinfo_ = now;
    }
    *v = vmalloc_cache_;
    *v->mutable_vmallocinfo_read_at() = ToProto(*last_vmallocinfo_);
    if (!vmalloc_error_.empty()) {
      AddUnknown(unknown, "vmalloc.unpurged_areas", vmalloc_error_);
    } else if (page == 0) {
      AddUnknown(unknown, "vmalloc.unpurged_shadow_page_areas",
                 "page size unknown");
    }
  }
  absl::StatusOr<std::string> mem = fs_->ReadFile("/proc/meminfo", 1 << 20);
  absl::StatusOr<MeminfoVmalloc> m =
      mem.ok() ? ParseMeminfoVmalloc(*mem)
               : absl::StatusOr<MeminfoVmalloc>(mem.status());
  if (m.ok()) {
    if (m->total_bytes) v->set_vmalloc_total_bytes(*m->total_bytes);
    if (m->used_bytes) v->set_vmalloc_used_bytes(*m->used_bytes);
    if (m->chunk_bytes) v->set_vmalloc_chunk_bytes(*m->chunk_bytes);
  } else {
    AddUnknown(unknown, "vmalloc.vmalloc_used_bytes", m.status().message());
  }
}

void Collector::ReadVmallocinfo(uint64_t page, uint32_t pages_per_shadow) {
  vmalloc_cache_.Clear();
  vmalloc_error_.clear();
  // An area of pages_per_shadow pages owns a whole shadow page (none
  // without shadow memory).
  const bool shadow = page > 0 && pages_per_shadow > 0;
  VmallocInfoCounter counter(shadow ? pages_per_shadow * page : UINT64_MAX);
  absl::StatusOr<uint64_t> lines =
      fs_->ReadLines("/proc/vmallocinfo", kVmallocInfoMax,
                     [&](absl::string_view line) { counter.AddLine(line); });
  absl::StatusOr<VmallocCounts> counts =
      lines.ok() ? counter.Result()
                 : absl::StatusOr<VmallocCounts>(lines.status());
  if (!counts.ok()) {
    vmalloc_error_ = std::string(counts.status().message());
    return;
  }
  vmalloc_cache_.set_areas(counts->areas);
  vmalloc_cache_.set_unpurged_areas(counts->unpurged_areas);
  vmalloc_cache_.set_unpurged_bytes(counts->unpurged_bytes);
  if (shadow) {
    vmalloc_cache_.set_unpurged_shadow_page_areas(
        counts->unpurged_shadow_page_areas);
  }
}

void Collector::CollectTrie(const std::optional<std::string>& debugfs,
                            absl::Time now, v1::HostSnapshot* s) {
  const v1::KernelInfo& k = s->kernel();
  if (k.has_config_page_owner() && !k.config_page_owner()) {
    AddNotApplicable(s->mutable_not_applicable(), "trie",
                     "CONFIG_PAGE_OWNER is off: no page_owner stacks");
    return;
  }
  if (!last_trie_.has_value() || now - *last_trie_ >= options_.trie_interval) {
    last_trie_ = now;
    trie_.reset();
    if (!debugfs.has_value()) {
      trie_error_ = "debugfs not mounted";
    } else {
      std::string path = *debugfs + "/page_owner_stacks/show_stacks";
      absl::StatusOr<std::string> text = fs_->ReadFile(path, 256 << 20);
      absl::StatusOr<v1::TrieMeasurement> m =
          text.ok() ? MeasureShowStacks(*text)
                    : absl::StatusOr<v1::TrieMeasurement>(text.status());
      if (m.ok()) {
        trie_ = *m;
        trie_error_.clear();
      } else {
        trie_error_ = std::string(m.status().message());
        if (absl::IsNotFound(m.status()) && facts_->release.has_value() &&
            !options_.features->Has(feature::kPageOwnerStacks, *facts_->release)
                 .present) {
          trie_error_ = absl::StrCat(path, ": not provided before 6.9");
        }
      }
    }
  }
  if (trie_.has_value()) {
    *s->mutable_trie() = *trie_;
  } else {
    AddUnknown(s->mutable_unknown(), "trie", trie_error_);
  }
}

v1::HostSnapshot Collector::Collect() {
  const absl::Time now = clock_();
  if (!facts_.has_value()) {
    facts_ = ReadKernelFacts(*fs_, *options_.features);
    for (const std::string& w : facts_->warnings) warnings_.push_back(w);
  }
  v1::HostSnapshot s;
  *s.mutable_kernel() = facts_->kernel;
  *s.mutable_unknown() = facts_->unknown;
  *s.mutable_not_applicable() = facts_->not_applicable;
  Unknowns* unknown = s.mutable_unknown();

  LocateMounts(now, unknown);
  CollectPreempt(debugfs_, s.mutable_kernel(), unknown);
  fgraph_.Collect(tracefs_, facts_->release, facts_->kernel.arch(), now,
                  s.mutable_fgraph(), unknown);
  CollectThreads(&s);
  CollectThresholds(s.mutable_thresholds(), unknown);
  CollectCpus(s.mutable_cpus(), unknown);
  CollectStackDepot(debugfs_, now, &s);
  CollectTrie(debugfs_, now, &s);
  CollectVmalloc(now, &s);
  cycle_costs_ = fs_->TakeCosts();
  return s;
}

}  // namespace tracehealth::agent
