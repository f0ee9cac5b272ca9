#include "agent/collect/collector.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "agent/parsers/cpu.h"
#include "agent/parsers/kconfig.h"
#include "agent/parsers/preempt.h"
#include "agent/parsers/proc.h"
#include "agent/parsers/stackdepot.h"
#include "agent/parsers/vmallocinfo.h"
#include "common/kernel/release.h"
#include "common/proto_time.h"
#include "common/models/stackdepot/stack_depot.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kSmallFile = 64 * 1024;
constexpr size_t kConfigGzMax = 4 << 20;
constexpr size_t kConfigTextMax = 16 << 20;
constexpr uint64_t kVmallocInfoMax = 256ull << 20;
constexpr uint64_t kDefaultMaxPools = 8192;

void AddUnknown(google::protobuf::RepeatedPtrField<v1::UnknownInput>* unknown,
                absl::string_view input, absl::string_view reason) {
  v1::UnknownInput* u = unknown->Add();
  u->set_input(std::string(input));
  u->set_reason(std::string(reason));
}

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

void Collector::CollectStatic() {
  static_done_ = true;
  v1::KernelInfo* k = &static_kernel_;
  Unknowns* unknown = &static_unknown_;

  // Release and version string.
  absl::StatusOr<std::string> rel =
      fs_->ReadFile("/proc/sys/kernel/osrelease", kSmallFile);
  if (rel.ok()) {
    std::string r(absl::StripAsciiWhitespace(*rel));
    absl::StatusOr<KernelRelease> parsed = ParseKernelRelease(r);
    if (parsed.ok()) {
      k->set_release(r);
      release_ = *parsed;
    } else {
      AddUnknown(unknown, "kernel.release", parsed.status().message());
    }
  } else {
    AddUnknown(unknown, "kernel.release", rel.status().message());
  }
  absl::StatusOr<std::string> ver =
      fs_->ReadFile("/proc/sys/kernel/version", kSmallFile);
  if (ver.ok()) {
    absl::StatusOr<VersionPreemptFlags> flags = ParseVersionPreemptFlags(*ver);
    if (flags.ok()) {
      k->set_version(std::string(absl::StripAsciiWhitespace(*ver)));
      version_mode_ = ModeFromVersionFlags(*flags);
      if (flags->dynamic) k->set_preempt_dynamic(true);
    } else {
      AddUnknown(unknown, "kernel.version", flags.status().message());
    }
  } else {
    AddUnknown(unknown, "kernel.version", ver.status().message());
  }

  // Architecture: the arch sysctl, else uname() on the live root only.
  absl::StatusOr<std::string> arch =
      fs_->ReadFile("/proc/sys/kernel/arch", kSmallFile);
  if (arch.ok() && !absl::StripAsciiWhitespace(*arch).empty()) {
    k->set_arch(std::string(absl::StripAsciiWhitespace(*arch)));
  } else if (fs_->root() == "/") {
    struct utsname u;
    if (uname(&u) == 0) k->set_arch(u.machine);
  }
  if (!k->has_arch()) {
    AddUnknown(unknown, "kernel.arch",
               arch.ok() ? "/proc/sys/kernel/arch: empty"
                         : arch.status().message());
  }

  // Command line.
  absl::StatusOr<std::string> cmdline = fs_->ReadFile("/proc/cmdline", 4096);
  std::string cmdline_preempt;
  if (cmdline.ok()) {
    k->set_cmdline(std::string(absl::StripTrailingAsciiWhitespace(*cmdline)));
    cmdline_preempt = CmdlineParam(*cmdline, "preempt").value_or("");
    absl::StatusOr<std::optional<uint64_t>> pools =
        ParseStackDepotMaxPools(*cmdline);
    if (pools.ok()) {
      cmdline_max_pools_ = *pools;
    } else {
      cmdline_max_pools_error_ = std::string(pools.status().message());
    }
  } else {
    AddUnknown(unknown, "kernel.cmdline", cmdline.status().message());
    cmdline_max_pools_error_ = std::string(cmdline.status().message());
  }

  // Kernel config: /proc/config.gz, else /boot/config-<release>.
  std::optional<KernelConfig> config;
  std::string config_errors;
  absl::StatusOr<std::string> gz = fs_->ReadFile("/proc/config.gz", kConfigGzMax);
  if (gz.ok()) {
    absl::StatusOr<std::string> text = Gunzip(*gz, kConfigTextMax);
    absl::StatusOr<KernelConfig> parsed =
        text.ok() ? KernelConfig::Parse(*text)
                  : absl::StatusOr<KernelConfig>(text.status());
    if (parsed.ok()) {
      config = std::move(*parsed);
      k->set_config_source("/proc/config.gz");
    } else {
      config_errors = absl::StrCat("/proc/config.gz: ", parsed.status().message());
    }
  } else {
    config_errors = std::string(gz.status().message());
  }
  if (!config.has_value() && k->has_release()) {
    std::string path = absl::StrCat("/boot/config-", k->release());
    absl::StatusOr<std::string> text = fs_->ReadFile(path, kConfigTextMax);
    absl::StatusOr<KernelConfig> parsed =
        text.ok() ? KernelConfig::Parse(*text)
                  : absl::StatusOr<KernelConfig>(text.status());
    if (parsed.ok()) {
      config = std::move(*parsed);
      k->set_config_source(path);
    } else {
      absl::StrAppend(&config_errors, "; ", parsed.status().message());
    }
  }
  if (config.has_value()) {
    auto set_bool = [&](const char* name, void (v1::KernelInfo::*setter)(bool)) {
      std::optional<bool> v = config->Enabled(name);
      // Options absent from a config are off (Kconfig omits options whose
      // dependencies are unmet).
      (k->*setter)(v.value_or(false));
    };
    set_bool("CONFIG_KASAN", &v1::KernelInfo::set_config_kasan);
    set_bool("CONFIG_KASAN_GENERIC", &v1::KernelInfo::set_config_kasan_generic);
    set_bool("CONFIG_KASAN_VMALLOC", &v1::KernelInfo::set_config_kasan_vmalloc);
    set_bool("CONFIG_PAGE_OWNER", &v1::KernelInfo::set_config_page_owner);
    set_bool("CONFIG_STACKDEPOT", &v1::KernelInfo::set_config_stackdepot);
    set_bool("CONFIG_FUNCTION_GRAPH_TRACER",
             &v1::KernelInfo::set_config_function_graph_tracer);
    set_bool("CONFIG_FPROBE", &v1::KernelInfo::set_config_fprobe);
    std::optional<int64_t> frames = config->Int("CONFIG_STACKDEPOT_MAX_FRAMES");
    if (frames.has_value() && *frames > 0 && *frames <= 4096) {
      k->set_config_stackdepot_max_frames(static_cast<uint32_t>(*frames));
    } else if (k->config_stackdepot()) {
      AddUnknown(unknown, "kernel.config_stackdepot_max_frames",
                 "CONFIG_STACKDEPOT_MAX_FRAMES not in the config");
    }
    std::optional<bool> dynamic = config->Enabled("CONFIG_PREEMPT_DYNAMIC");
    kconfig_dynamic_ = dynamic.value_or(false);
    k->set_preempt_dynamic(*kconfig_dynamic_);
    config_mode_ = ModeFromConfig(*config, cmdline_preempt);
    config_mode_source_ =
        (*kconfig_dynamic_ && SchedPreemptMode(cmdline_preempt) !=
                                  v1::PREEMPT_MODE_UNKNOWN)
            ? "config and preempt= boot parameter"
            : "config";
    if (config->Enabled("CONFIG_PAGE_SIZE_16KB").value_or(false)) {
      k->set_page_size(16384);
    } else if (config->Enabled("CONFIG_PAGE_SIZE_64KB").value_or(false)) {
      k->set_page_size(65536);
    } else if (config->Enabled("CONFIG_PAGE_SIZE_4KB").value_or(false) ||
               config->Enabled("CONFIG_X86").value_or(false)) {
      k->set_page_size(4096);
    }
  } else {
    AddUnknown(unknown, "kernel.config", config_errors);
  }
  if (!k->has_page_size() && fs_->root() == "/") {
    long ps = sysconf(_SC_PAGESIZE);
    if (ps > 0) k->set_page_size(static_cast<uint32_t>(ps));
  }
  if (!k->has_page_size()) {
    AddUnknown(unknown, "kernel.page_size", "no page size in the kernel config");
  }

  // CPU model and invlpgb: fixed for the boot.
  absl::StatusOr<std::string> cpuinfo =
      fs_->ReadFile("/proc/cpuinfo", 16 << 20);
  absl::StatusOr<CpuInfoFacts> facts =
      cpuinfo.ok() ? ParseCpuInfo(*cpuinfo)
                   : absl::StatusOr<CpuInfoFacts>(cpuinfo.status());
  if (facts.ok()) {
    invlpgb_ = facts->invlpgb;
    model_name_ = facts->model_name;
  } else {
    cpuinfo_error_ = std::string(facts.status().message());
  }
}

void Collector::CollectPreempt(const std::optional<std::string>& debugfs,
                               v1::KernelInfo* kernel, Unknowns* unknown) {
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
  if (config_mode_.has_value()) {
    kernel->set_preempt_mode(*config_mode_);
    kernel->set_preempt_source(config_mode_source_);
    return;
  }
  if (version_mode_.has_value()) {
    kernel->set_preempt_mode(*version_mode_);
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
  absl::StatusOr<std::string> la = fs_->ReadFile("/proc/loadavg", kSmallFile);
  absl::StatusOr<Loadavg> load =
      la.ok() ? ParseLoadavg(*la) : absl::StatusOr<Loadavg>(la.status());
  if (load.ok()) {
    t->set_total(load->total);
    t->set_running(load->running);
  } else {
    AddUnknown(unknown, "threads.total", load.status().message());
  }
  absl::StatusOr<std::string> stat = fs_->ReadFile("/proc/stat", 4 << 20);
  if (stat.ok()) {
    absl::StatusOr<uint64_t> forks = ParseStatProcesses(*stat);
    if (forks.ok()) {
      t->set_forks_since_boot(*forks);
    } else {
      AddUnknown(unknown, "threads.forks_since_boot", forks.status().message());
    }
  } else {
    AddUnknown(unknown, "threads.forks_since_boot", stat.status().message());
  }
  absl::StatusOr<std::string> up = fs_->ReadFile("/proc/uptime", kSmallFile);
  absl::StatusOr<double> uptime =
      up.ok() ? ParseUptime(*up) : absl::StatusOr<double>(up.status());
  if (uptime.ok()) {
    t->set_uptime_seconds(*uptime);
  } else {
    AddUnknown(unknown, "threads.uptime_seconds", uptime.status().message());
  }

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
  auto wd = read_int("/proc/sys/kernel/watchdog_thresh");
  if (wd.ok()) {
    t->set_watchdog_thresh_seconds(static_cast<uint32_t>(*wd));
  } else {
    AddUnknown(unknown, "thresholds.watchdog_thresh_seconds",
               wd.status().message());
  }
  auto sp = read_int("/proc/sys/kernel/softlockup_panic");
  if (sp.ok()) {
    t->set_softlockup_panic(*sp != 0);
  } else {
    AddUnknown(unknown, "thresholds.softlockup_panic", sp.status().message());
  }
  auto rcu = read_int("/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout");
  if (rcu.ok()) {
    t->set_rcu_cpu_stall_timeout_seconds(static_cast<uint32_t>(*rcu));
  } else {
    AddUnknown(unknown, "thresholds.rcu_cpu_stall_timeout_seconds",
               rcu.status().message());
  }
  auto rp = read_int("/proc/sys/kernel/panic_on_rcu_stall");
  if (rp.ok()) {
    t->set_panic_on_rcu_stall(*rp != 0);
  } else {
    AddUnknown(unknown, "thresholds.panic_on_rcu_stall", rp.status().message());
  }
}

void Collector::CollectCpus(v1::CpuInfo* cpus, Unknowns* unknown) {
  absl::StatusOr<std::string> text =
      fs_->ReadFile("/sys/devices/system/cpu/online", kSmallFile);
  absl::StatusOr<uint32_t> n =
      text.ok() ? ParseCpuListCount(*text) : absl::StatusOr<uint32_t>(text.status());
  if (n.ok()) {
    cpus->set_online(*n);
  } else {
    AddUnknown(unknown, "cpus.online", n.status().message());
  }
  if (invlpgb_.has_value()) {
    cpus->set_invlpgb(*invlpgb_);
    if (model_name_.has_value()) cpus->set_model_name(*model_name_);
  } else {
    AddUnknown(unknown, "cpus.invlpgb", cpuinfo_error_);
  }
}

void Collector::CollectStackDepot(const std::optional<std::string>& debugfs,
                                  absl::Time now, v1::HostSnapshot* s) {
  v1::StackDepotStats* d = s->mutable_stackdepot();
  Unknowns* unknown = s->mutable_unknown();
  const v1::KernelInfo& k = s->kernel();
  // The pool budget.
  const bool param = release_.has_value() &&
                     options_.features
                         ->Has(feature::kStackdepotMaxPoolsParam, *release_)
                         .present;
  if (param && cmdline_max_pools_.has_value()) {
    d->set_max_pools(*cmdline_max_pools_);
    d->set_max_pools_source("cmdline stack_depot_max_pools=");
  } else if (!cmdline_max_pools_error_.empty() && param) {
    AddUnknown(unknown, "stackdepot.max_pools", cmdline_max_pools_error_);
  } else {
    d->set_max_pools(kDefaultMaxPools);
    d->set_max_pools_source(param ? "kernel default" : "hard cap before 6.17");
  }
  if (k.has_config_stackdepot() && !k.config_stackdepot()) {
    AddUnknown(unknown, "stackdepot.pools", "CONFIG_STACKDEPOT is off");
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
    if (absl::IsNotFound(c.status()) && release_.has_value() &&
        !options_.features->Has(feature::kStackdepotStats, *release_).present) {
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
  for (v1::DepotSample& sample :
       depot_history_.Observe(boot_, now, c->pools,
                              c->persistent_bytes.value_or(0), &persist)) {
    *s->add_depot_history() = std::move(sample);
  }
  if (!persist.ok()) warnings_.push_back(std::string(persist.message()));
}

void Collector::CollectVmalloc(absl::Time now, v1::HostSnapshot* s) {
  v1::VmallocState* v = s->mutable_vmalloc();
  Unknowns* unknown = s->mutable_unknown();
  const uint64_t page = s->kernel().has_page_size() ? s->kernel().page_size() : 0;
  const bool every_cycle = !s->kernel().has_config_kasan_vmalloc() ||
                           s->kernel().config_kasan_vmalloc();
  if (every_cycle || !last_vmallocinfo_.has_value() ||
      now - *last_vmallocinfo_ >= options_.vmallocinfo_interval_without_kasan) {
    last_vmallocinfo_ = now;
    vmalloc_cache_.Clear();
    vmalloc_error_.clear();
    // Generic KASAN: one shadow byte per 8 bytes, so an area of 8 pages owns
    // a whole shadow page.
    VmallocInfoCounter counter(page > 0 ? 8 * page : UINT64_MAX);
    absl::StatusOr<uint64_t> lines = fs_->ReadLines(
        "/proc/vmallocinfo", kVmallocInfoMax,
        [&](absl::string_view line) { counter.AddLine(line); });
    absl::StatusOr<VmallocCounts> counts =
        lines.ok() ? counter.Result()
                   : absl::StatusOr<VmallocCounts>(lines.status());
    if (counts.ok()) {
      vmalloc_cache_.set_areas(counts->areas);
      vmalloc_cache_.set_unpurged_areas(counts->unpurged_areas);
      vmalloc_cache_.set_unpurged_bytes(counts->unpurged_bytes);
      if (page > 0) {
        vmalloc_cache_.set_unpurged_shadow_page_areas(
            counts->unpurged_shadow_page_areas);
      }
    } else {
      vmalloc_error_ = std::string(counts.status().message());
    }
  }
  *v = vmalloc_cache_;
  if (!vmalloc_error_.empty()) {
    AddUnknown(unknown, "vmalloc.unpurged_areas", vmalloc_error_);
  } else if (page == 0) {
    AddUnknown(unknown, "vmalloc.unpurged_shadow_page_areas",
               "page size unknown");
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

void Collector::CollectTrie(const std::optional<std::string>& debugfs,
                            absl::Time now, v1::HostSnapshot* s) {
  const v1::KernelInfo& k = s->kernel();
  if (k.has_config_page_owner() && !k.config_page_owner()) {
    AddUnknown(s->mutable_unknown(), "trie", "CONFIG_PAGE_OWNER is off");
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
        if (absl::IsNotFound(m.status()) && release_.has_value() &&
            !options_.features->Has(feature::kPageOwnerStacks, *release_)
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
  if (!static_done_) CollectStatic();
  v1::HostSnapshot s;
  *s.mutable_kernel() = static_kernel_;
  *s.mutable_unknown() = static_unknown_;
  Unknowns* unknown = s.mutable_unknown();

  // Where tracefs and debugfs are mounted.
  std::optional<std::string> tracefs, debugfs;
  // PID 1's view first: in a container that shares the host's PID namespace
  // and mounts the host's /proc and /sys under --root, the agent's own
  // /proc/mounts names container paths, while PID 1's names the host's.
  absl::StatusOr<std::string> mounts_text = fs_->ReadFile("/proc/1/mounts", 4 << 20);
  if (!mounts_text.ok()) mounts_text = fs_->ReadFile("/proc/mounts", 4 << 20);
  absl::StatusOr<TracingMounts> mounts =
      mounts_text.ok() ? ParseMounts(*mounts_text)
                       : absl::StatusOr<TracingMounts>(mounts_text.status());
  if (mounts.ok()) {
    debugfs = mounts->debugfs;
    tracefs = mounts->tracefs;
    if (!tracefs.has_value() && debugfs.has_value()) {
      // tracefs is automounted at debugfs/tracing.
      std::string auto_path = *debugfs + "/tracing";
      if (fs_->Exists(auto_path + "/current_tracer")) tracefs = auto_path;
    }
  } else {
    AddUnknown(unknown, "mounts", mounts.status().message());
  }

  CollectPreempt(debugfs, s.mutable_kernel(), unknown);
  fgraph_.Collect(tracefs, release_, now, s.mutable_fgraph(), unknown);
  CollectThreads(&s);
  CollectThresholds(s.mutable_thresholds(), unknown);
  CollectCpus(s.mutable_cpus(), unknown);
  CollectStackDepot(debugfs, now, &s);
  CollectTrie(debugfs, now, &s);
  CollectVmalloc(now, &s);
  return s;
}

}  // namespace tracehealth::agent
