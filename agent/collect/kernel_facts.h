// KernelFacts: the inputs fixed for a boot, which the collector reads once:
// the release and version string, the upstream release behind a Debian
// (/proc/version) or Ubuntu (/proc/version_signature) one, the
// architecture, the command line, the kernel config (the first readable of
// /proc/config.gz, /boot/config-RELEASE, /lib/modules/RELEASE/config and
// /usr/lib/modules/RELEASE/config) with what it says of KASAN, page_owner, the
// stack depot, ftrace, preemption (PREEMPT_DYNAMIC, PREEMPT_RCU) and the page
// size, the CPU model and its invlpgb and hypervisor flags from /proc/cpuinfo
// (on arm64 the model from CPU 0's MIDR_EL1: sysfs
// /sys/devices/system/cpu/cpu0/regs/identification/midr_el1, else
// /proc/cpuinfo's MIDR lines), CPU 0's cache sizes
// (/sys/devices/system/cpu/cpu0/cache/index*), and the possible CPUs.
//
// Every input is optional: what cannot be read or parsed is left unset and
// named in `unknown` with the reason; what the kernel does not have is named
// in `not_applicable`.
//
// Thread safety: a pure function of the files under `fs`.
#ifndef TRACEHEALTH_AGENT_COLLECT_KERNEL_FACTS_H_
#define TRACEHEALTH_AGENT_COLLECT_KERNEL_FACTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/collect/unknown_input.h"
#include "agent/parsers/cpu.h"
#include "common/kernel/feature_table.h"
#include "common/kernel/release.h"
#include "common/procfs/host_fs.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::agent {

struct KernelFacts {
  // Release, version, arch, cmdline, config_* fields, preempt_dynamic and
  // page size; the preemption mode is the collector's (it may change at
  // run time through debugfs).
  v1::KernelInfo kernel;
  UnknownInputs unknown;
  NotApplicableInputs not_applicable;
  std::optional<KernelRelease> release;
  // The mode the config names (with preempt= on a PREEMPT_DYNAMIC kernel),
  // and which of the two said it.
  std::optional<v1::PreemptMode> config_mode;
  std::string config_mode_source;
  // The mode the version string names (PREEMPT_RT, PREEMPT_LAZY, PREEMPT).
  std::optional<v1::PreemptMode> version_mode;
  // /proc/cpuinfo: the flags and the model, or why they are unknown.
  std::optional<bool> invlpgb;
  // Only from x86's flags line; with another architecture's Features line,
  // unset and hypervisor_error says so.
  std::optional<bool> hypervisor;
  std::string hypervisor_error;
  // x86's `ibt` flag; unset elsewhere (no such flag, not an unknown).
  std::optional<bool> ibt;
  // x86: "model name"; arm64: ArmCpuModelName(midr) when the MIDR is known,
  // else what /proc/cpuinfo calls it (nothing, but for a 32-bit reader).
  std::optional<std::string> model_name;
  std::string cpuinfo_error;
  // arm64 (the arch aarch64, or MIDR lines in /proc/cpuinfo): CPU 0's
  // MIDR_EL1, or why it is unknown. Both unset/empty on other architectures,
  // which have none.
  std::optional<uint32_t> midr;
  std::string midr_error;
  // CPU 0's cache sizes, or why each is unknown.
  CacheLevels caches;
  // For the agent's log: sources that disagree (a midr_el1 other than
  // /proc/cpuinfo's; the sysfs one is taken).
  std::vector<std::string> warnings;
  // /sys/devices/system/cpu/possible, or why it is unknown.
  std::optional<uint32_t> possible_cpus;
  std::string possible_error;
};

// `features` decides which inputs the release does not have and whether the
// kernel refuses preempt=none|voluntary (row preempt_modes_restricted, by
// release and architecture).
KernelFacts ReadKernelFacts(
    const HostFs& fs, const FeatureTable& features = FeatureTable::Builtin());

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_COLLECT_KERNEL_FACTS_H_
