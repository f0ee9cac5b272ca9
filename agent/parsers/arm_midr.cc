#include "agent/parsers/arm_midr.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace tracehealth::agent {
namespace {

absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("midr_el1 '", absl::CEscape(text), "': ", why));
}

struct Part {
  uint32_t implementer;
  uint32_t part;
  const char* name;
};

// The common server (and a few board) parts, named as util-linux lscpu
// names them (sys-utils/lscpu-arm.c: arm_part, ampere_part, fujitsu_part,
// hisi_part, cavium_part; the Neoverse-V3 and -N3 entries as in its newer
// table and the kernel's arch/arm64/include/asm/cputype.h). Several
// products share an Arm part: Ampere Altra and AWS Graviton2 are
// Neoverse-N1, Graviton3 Neoverse-V1, Graviton4 and NVIDIA Grace
// Neoverse-V2; the MIDR does not tell them apart, so neither does the name.
constexpr Part kParts[] = {
    {0x41, 0xd03, "Cortex-A53"},     {0x41, 0xd07, "Cortex-A57"},
    {0x41, 0xd08, "Cortex-A72"},     {0x41, 0xd0b, "Cortex-A76"},
    {0x41, 0xd0c, "Neoverse-N1"},    {0x41, 0xd40, "Neoverse-V1"},
    {0x41, 0xd49, "Neoverse-N2"},    {0x41, 0xd4f, "Neoverse-V2"},
    {0x41, 0xd84, "Neoverse-V3"},    {0x41, 0xd8e, "Neoverse-N3"},
    {0x43, 0x0af, "ThunderX2-99xx"},  // Cavium
    {0x46, 0x001, "A64FX"},           // Fujitsu
    {0x48, 0xd01, "Kunpeng-920"},     // HiSilicon (TSV110)
    {0xc0, 0xac3, "Ampere-1"},        // AmpereOne
    {0xc0, 0xac4, "Ampere-1a"},
};

}  // namespace

MidrFields DecodeMidr(uint32_t midr) {
  MidrFields f;
  f.implementer = (midr >> 24) & 0xff;
  f.variant = (midr >> 20) & 0xf;
  f.architecture = (midr >> 16) & 0xf;
  f.part = (midr >> 4) & 0xfff;
  f.revision = midr & 0xf;
  return f;
}

uint32_t EncodeMidr(const MidrFields& f) {
  return (f.implementer & 0xff) << 24 | (f.variant & 0xf) << 20 |
         (f.architecture & 0xf) << 16 | (f.part & 0xfff) << 4 |
         (f.revision & 0xf);
}

bool SameMidr(uint32_t a, uint32_t b) {
  return ((a ^ b) & ~(uint32_t{0xf} << 16)) == 0;
}

absl::StatusOr<uint32_t> ParseMidrEl1(absl::string_view text) {
  absl::string_view t = text;
  absl::ConsumeSuffix(&t, "\n");
  if (t.empty()) {
    return Bad(text, "empty (the kernel never read this CPU's registers)");
  }
  absl::string_view digits = t;
  if (!absl::ConsumePrefix(&digits, "0x") || digits.empty()) {
    return Bad(text, "not 0x and hex digits");
  }
  if (digits.size() > 16) return Bad(text, "more than 64 bits");
  uint64_t v = 0;
  for (char c : digits) {
    if (!absl::ascii_isxdigit(c)) return Bad(text, "not 0x and hex digits");
    const int d =
        absl::ascii_isdigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  if (v >> 32 != 0) return Bad(text, "bits 63:32 are set (RES0)");
  return static_cast<uint32_t>(v);
}

std::string ArmCpuModelName(uint32_t midr) {
  const MidrFields f = DecodeMidr(midr);
  for (const Part& p : kParts) {
    if (p.implementer == f.implementer && p.part == f.part) return p.name;
  }
  return absl::StrFormat("implementer 0x%02x part 0x%03x", f.implementer,
                         f.part);
}

}  // namespace tracehealth::agent
