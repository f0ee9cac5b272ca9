// arm64 CPU identification: MIDR_EL1, the Main ID Register, as the kernel
// shows it in /sys/devices/system/cpu/cpuN/regs/identification/midr_el1
// ("0x00000000410fd4f1\n", arch/arm64/kernel/cpuinfo.c: "0x%016llx\n"; an
// empty file for a CPU whose registers were never read) and, field by
// field, in /proc/cpuinfo ("CPU implementer : 0x41", "CPU variant : 0x0",
// "CPU part : 0xd4f", "CPU revision : 1"), and the CPU model name the agent
// gives it.
//
// MIDR_EL1 layout (Arm ARM D19.2): implementer [31:24], variant [23:20],
// architecture [19:16] (0xf on every AArch64 CPU: "see the ID registers";
// /proc/cpuinfo prints a constant "CPU architecture: 8" instead), part
// number [15:4], revision [3:0]; bits [63:32] are RES0.
//
// Pure functions; errors are InvalidArgument naming what was wrong.
#ifndef TRACEHEALTH_AGENT_PARSERS_ARM_MIDR_H_
#define TRACEHEALTH_AGENT_PARSERS_ARM_MIDR_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tracehealth::agent {

struct MidrFields {
  uint32_t implementer = 0;   // 8 bits: 0x41 Arm, 0xc0 Ampere, ...
  uint32_t variant = 0;       // 4 bits: the major revision (rN of rNpM)
  uint32_t architecture = 0;  // 4 bits: 0xf on AArch64 CPUs
  uint32_t part = 0;          // 12 bits: 0xd4f Neoverse-V2, ...
  uint32_t revision = 0;      // 4 bits: the minor revision (pM of rNpM)
};

MidrFields DecodeMidr(uint32_t midr);
// Fields wider than their bits are truncated (the callers check them).
uint32_t EncodeMidr(const MidrFields& fields);

// Whether two MIDR values name the same CPU: all fields but the
// architecture, which /proc/cpuinfo does not show.
bool SameMidr(uint32_t a, uint32_t b);

// The sysfs midr_el1 file: "0x" and 1 to 16 hex digits, an optional '\n'.
// Errors: empty (the kernel prints nothing for a CPU whose registers it
// never read), no "0x", a non-hex digit, more than 16 digits, bits above 31
// set (RES0).
absl::StatusOr<uint32_t> ParseMidrEl1(absl::string_view text);

// The model name for a MIDR: the part's name in util-linux lscpu's table
// (sys-utils/lscpu-arm.c), for the common server and board parts listed in
// arm_midr.cc ("Neoverse-V2", "Ampere-1", "A64FX", "Kunpeng-920"), else
// "implementer 0xNN part 0xNNN" ("implementer 0x41 part 0xd8f"). Neither
// the variant nor the revision is part of it: hosts of one part are one
// hardware class whatever their stepping (the MIDR itself is kept whole in
// the snapshot).
std::string ArmCpuModelName(uint32_t midr);

}  // namespace tracehealth::agent

#endif  // TRACEHEALTH_AGENT_PARSERS_ARM_MIDR_H_
