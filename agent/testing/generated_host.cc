#include "agent/testing/generated_host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracehealth::agent {
namespace {

constexpr char kRelease[] = "6.16.12-cloud-amd64";
constexpr uint64_t kFirstPid = 1000;
constexpr uint64_t kVmallocStart = 0xffffc90000000000ull;
constexpr uint64_t kStackArea = 20480;

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return Errno(path);
  return absl::OkStatus();
}

// mkdir -p of `path`'s parent, then `content` into `path`.
absl::Status Write(const std::string& root, const std::string& rel,
                   const std::string& content) {
  const std::string full = absl::StrCat(root, "/", rel);
  for (size_t p = full.find('/', root.size() + 1); p != std::string::npos;
       p = full.find('/', p + 1)) {
    absl::Status s = MakeDir(full.substr(0, p));
    if (!s.ok()) return s;
  }
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat(full, ": write failed"));
  return absl::OkStatus();
}

std::string Config(bool kasan) {
  std::string c = absl::StrCat(
      "#\n# Automatically generated file; DO NOT EDIT.\n# Linux/x86 ", kRelease,
      " Kernel Configuration\n#\nCONFIG_X86_64=y\nCONFIG_X86=y\n"
      "CONFIG_64BIT=y\nCONFIG_SMP=y\nCONFIG_FTRACE=y\n"
      "CONFIG_FUNCTION_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n"
      "CONFIG_FUNCTION_GRAPH_TRACER=y\nCONFIG_FPROBE=y\n"
      "CONFIG_DEBUG_FS=y\nCONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\n"
      "# CONFIG_PREEMPT_VOLUNTARY is not set\n# CONFIG_PREEMPT is not set\n"
      "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_VMAP_STACK=y\nCONFIG_STACKDEPOT=y\n"
      "CONFIG_STACKDEPOT_MAX_FRAMES=64\n# CONFIG_PAGE_OWNER is not set\n");
  absl::StrAppend(&c, kasan ? "CONFIG_KASAN=y\nCONFIG_KASAN_GENERIC=y\n"
                              "CONFIG_KASAN_VMALLOC=y\n"
                            : "# CONFIG_KASAN is not set\n");
  return c;
}

std::string Cpuinfo(uint32_t cpus) {
  std::string out;
  for (uint32_t i = 0; i < cpus; ++i) {
    absl::StrAppend(
        &out, "processor\t: ", i,
        "\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
        "model name\t: Intel(R) Xeon(R) Platinum 8480+\nstepping\t: 8\n"
        "cpu MHz\t\t: 2000.000\ncache size\t: 107520 KB\nphysical id\t: 0\n"
        "siblings\t: ",
        cpus, "\ncore id\t\t: ", i, "\ncpu cores\t: ", cpus,
        "\napicid\t\t: ", i,
        "\nfpu\t\t: yes\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic "
        "sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht "
        "syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology "
        "cpuid pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe "
        "popcnt aes xsave avx f16c rdrand hypervisor lahf_lm abm avx2 smep "
        "bmi2 erms invpcid avx512f avx512dq rdseed adx smap clflushopt clwb "
        "avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves "
        "arat umip pku ospke\nbogomips\t: 4000.00\nclflush size\t: 64\n"
        "cache_alignment\t: 64\naddress sizes\t: 46 bits physical, 57 bits "
        "virtual\npower management:\n\n");
  }
  return out;
}

std::string Stat(uint32_t cpus, uint64_t forks, uint64_t running) {
  std::string out =
      "cpu  102132153 290696 30847190 4682848312 166830 0 "
      "251950 0 0 0\n";
  for (uint32_t i = 0; i < cpus; ++i) {
    absl::StrAppend(&out, "cpu", i,
                    " 1393280 32966 572056 133432920 6130 0 17875 0 0 0\n");
  }
  absl::StrAppend(&out,
                  "intr 1992923451 0 9 0 0 0 0 0 0 1 0 0 0 0\n"
                  "ctxt 27184748431\nbtime 1795900000\nprocesses ",
                  forks, "\nprocs_running ", running,
                  "\nprocs_blocked 0\nsoftirq 1234567890 12 345678 9 1234 "
                  "56789 0 1234 345678 0 456789\n");
  return out;
}

std::string Vmallocinfo(uint64_t threads) {
  static constexpr struct {
    const char* caller;
    const char* kind;
    uint64_t size;
  } kBase[] = {
      {"irq_init_percpu_irqstack+0xed/0x120", "vmap", 20480},
      {"bpf_prog_alloc_no_stats+0x4a/0x1a0", "vmalloc", 8192},
      {"n_tty_open+0x19/0xb0", "vmalloc", 24576},
      {"load_module+0x1a93/0x2290", "vmalloc", 131072},
      {"pcpu_get_vm_areas+0x0/0x1130", "vmalloc", 2097152},
  };
  std::string out;
  out.reserve((kBaseVmapAreas + threads) * 104);
  uint64_t addr = kVmallocStart;
  for (uint64_t i = 0; i < kBaseVmapAreas; ++i) {
    const auto& b = kBase[i % (sizeof(kBase) / sizeof(kBase[0]))];
    if (i % 100 == 99) {
      absl::StrAppend(
          &out,
          absl::StrFormat("0x%016x-0x%016x %7d", addr, addr + b.size, b.size),
          " unpurged vm_area\n");
    } else {
      const uint64_t pages = b.size / 4096 - 1;
      absl::StrAppend(
          &out,
          absl::StrFormat("0x%016x-0x%016x %7d", addr, addr + b.size, b.size),
          " ", b.caller, " pages=", pages, " ", b.kind, " N0=", pages, "\n");
    }
    addr += b.size;
  }
  for (uint64_t t = 0; t < threads; ++t) {
    out += ThreadStackLine(addr);
    addr += kStackArea;
  }
  return out;
}

std::string Functions(uint64_t n) {
  static constexpr const char* kNames[] = {
      "do_sys_openat2",   "vfs_read",       "vfs_write",       "tcp_sendmsg",
      "tcp_recvmsg",      "try_to_wake_up", "copy_process",    "kernel_clone",
      "kmem_cache_alloc", "__kmalloc",      "handle_mm_fault", "filemap_fault"};
  std::string out;
  for (uint64_t i = 0; i < n; ++i) {
    absl::StrAppend(&out, kNames[i % 12], "_", i / 12,
                    i % 17 == 0 ? " [ext4]\n" : "\n");
  }
  return out;
}

// /proc/PID for every process: comm, fd links, fdinfo, task directories.
absl::Status WriteProcesses(const std::string& root, const GeneratedHost& h) {
  const uint64_t per = h.threads_per_process == 0 ? 1 : h.threads_per_process;
  const uint64_t processes = (h.threads + per - 1) / per;
  static constexpr const char* kTargets[] = {"/dev/null", "socket:[48213]",
                                             "pipe:[48214]"};
  uint64_t tid = kFirstPid;
  for (uint64_t p = 0; p < processes; ++p) {
    const uint64_t pid = tid;
    const std::string dir = absl::StrCat(root, "/proc/", pid);
    absl::Status s = Write(root, absl::StrCat("proc/", pid, "/comm"),
                           absl::StrCat("worker-", p % 50, "\n"));
    if (!s.ok()) return s;
    if (!(s = MakeDir(dir + "/fd")).ok()) return s;
    for (uint64_t fd = 0; fd < kFdsPerProcess; ++fd) {
      const std::string link = absl::StrCat(dir, "/fd/", fd);
      if (symlink(kTargets[fd % 3], link.c_str()) != 0 && errno != EEXIST) {
        return Errno(link);
      }
      s = Write(root, absl::StrCat("proc/", pid, "/fdinfo/", fd),
                absl::StrCat("pos:\t0\nflags:\t02000002\nmnt_id:\t", 9 + fd,
                             "\nino:\t", 48213 + fd, "\n"));
      if (!s.ok()) return s;
    }
    const uint64_t in_process = std::min(per, h.threads - p * per);
    if (h.task_dirs) {
      if (!(s = MakeDir(dir + "/task")).ok()) return s;
      for (uint64_t t = 0; t < in_process; ++t) {
        if (!(s = MakeDir(absl::StrCat(dir, "/task/", tid + t))).ok()) {
          return s;
        }
      }
    }
    tid += in_process;
  }
  return absl::OkStatus();
}

}  // namespace

std::string ThreadStackLine(uint64_t addr) {
  return absl::StrCat(absl::StrFormat("0x%016x-0x%016x %7d", addr,
                                      addr + kStackArea, kStackArea),
                      " alloc_thread_stack_node+0x1b7/0x2a0 pages=4 vmalloc "
                      "N0=4\n");
}

absl::Status WriteGeneratedConfig(const std::string& root, bool kasan_vmalloc) {
  return Write(root, absl::StrCat("boot/config-", kRelease),
               Config(kasan_vmalloc));
}

absl::Status WriteGeneratedHost(const std::string& root,
                                const GeneratedHost& h) {
  absl::Status made = MakeDir(root);
  if (!made.ok()) return made;
  const uint64_t running = std::min<uint64_t>(h.threads, 41);
  const std::pair<std::string, std::string> files[] = {
      {"proc/sys/kernel/osrelease", absl::StrCat(kRelease, "\n")},
      {"proc/sys/kernel/version",
       "#1 SMP PREEMPT_DYNAMIC Debian 6.16.12-1 (2025-10-14)\n"},
      {"proc/sys/kernel/arch", "x86_64\n"},
      {"proc/sys/kernel/hostname", "gen-host\n"},
      {"proc/sys/kernel/watchdog_thresh", "10\n"},
      {"proc/sys/kernel/softlockup_panic", "0\n"},
      {"proc/sys/kernel/panic_on_rcu_stall", "0\n"},
      {"proc/sys/kernel/hung_task_timeout_secs", "120\n"},
      {"proc/sys/kernel/hung_task_panic", "0\n"},
      {"proc/sys/kernel/random/boot_id",
       "6f0b7c1e-2d4a-4e59-9a51-0c8d2f1e7a10\n"},
      {"sys/module/rcupdate/parameters/rcu_cpu_stall_timeout", "21\n"},
      {"proc/loadavg",
       absl::StrCat("12.31 11.87 11.02 ", running, "/", h.threads, " ",
                    kFirstPid + h.threads, "\n")},
      {"proc/stat", Stat(h.cpus, h.threads + 5000, running)},
      {"proc/uptime", "84251.33 4312345.67\n"},
      {"proc/cmdline",
       absl::StrCat("BOOT_IMAGE=/boot/vmlinuz-", kRelease,
                    " root=UUID=3b5f2c1a-7e44-4b8e-9f0d-2a6c5e8b1d73 ro\n")},
      {"proc/mounts",
       "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
       "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
       "/dev/nvme0n1p1 / ext4 rw,relatime,discard,errors=remount-ro 0 0\n"
       "debugfs /sys/kernel/debug debugfs rw,nosuid,nodev,noexec,relatime 0 "
       "0\ntracefs /sys/kernel/tracing tracefs rw,nosuid,nodev,noexec,"
       "relatime 0 0\n"},
      {"sys/devices/system/cpu/online", absl::StrCat("0-", h.cpus - 1, "\n")},
      {"proc/cpuinfo", Cpuinfo(h.cpus)},
      {"proc/meminfo",
       "MemTotal:       394825216 kB\nMemFree:        131608405 kB\n"
       "VmallocTotal:   34359738367 kB\nVmallocUsed:      912344 kB\n"
       "VmallocChunk:          0 kB\n"},
      {"proc/vmallocinfo", Vmallocinfo(h.threads)},
      {"sys/kernel/debug/sched/preempt", "(none) voluntary full lazy\n"},
      {"sys/kernel/debug/stackdepot/stats",
       "pools: 3\nrefcounted_allocations: 0\nrefcounted_frees: 0\n"
       "refcounted_in_use: 0\nfreelist_size: 0\npersistent_count: 412\n"
       "persistent_bytes: 110912\n"},
      {"sys/kernel/tracing/current_tracer", "nop\n"},
      {"sys/kernel/tracing/available_tracers",
       "function_graph wakeup_dl wakeup_rt wakeup irqsoff function nop\n"},
      {"sys/kernel/tracing/options/display-graph", "0\n"},
      {"sys/kernel/tracing/function_profile_enabled", "0\n"},
      {"sys/kernel/tracing/dynamic_events", ""},
      {"sys/kernel/tracing/available_filter_functions", Functions(h.functions)},
      {"sys/kernel/tracing/enabled_functions", ""},
  };
  for (const auto& [rel, content] : files) {
    absl::Status s = Write(root, rel, content);
    if (!s.ok()) return s;
  }
  absl::Status s = MakeDir(root + "/sys/kernel/tracing/instances");
  if (!s.ok()) return s;
  if (!(s = WriteGeneratedConfig(root, h.kasan_vmalloc)).ok()) return s;
  return WriteProcesses(root, h);
}

}  // namespace tracehealth::agent
