#include "agent/collect/default_host_id.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/host_identity.h"

namespace tracehealth::agent {
namespace {

constexpr size_t kIdBytes = 16;

// 32 hex digits -> 16 bytes; false for anything else.
bool ParseId128(absl::string_view hex, unsigned char out[kIdBytes]) {
  if (hex.size() != 2 * kIdBytes) return false;
  for (char c : hex) {
    if (!absl::ascii_isxdigit(c)) return false;
  }
  const std::string bytes = absl::HexStringToBytes(hex);
  for (size_t i = 0; i < kIdBytes; ++i) {
    out[i] = static_cast<unsigned char>(bytes[i]);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> HostIdFromMachineId(absl::string_view machine_id) {
  absl::string_view id = absl::StripTrailingAsciiWhitespace(machine_id);
  unsigned char key[kIdBytes];
  if (!ParseId128(id, key)) {
    return absl::InvalidArgumentError("not 32 hexadecimal digits");
  }
  bool zero = true;
  for (unsigned char b : key) zero = zero && b == 0;
  if (zero) return absl::InvalidArgumentError("all zero");
  unsigned char app[kIdBytes];
  ParseId128(kTracehealthAppId, app);
  // systemd's sd_id128_get_machine_app_specific(): HMAC-SHA256 keyed by the
  // machine id over the application id, first half, as a v4 UUID.
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (HMAC(EVP_sha256(), key, kIdBytes, app, kIdBytes, mac, &mac_len) ==
          nullptr ||
      mac_len < kIdBytes) {
    return absl::InternalError("HMAC-SHA256 failed");
  }
  mac[6] = (mac[6] & 0x0F) | 0x40;
  mac[8] = (mac[8] & 0x3F) | 0x80;
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(mac), kIdBytes));
}

std::string ReadHostname(const HostFs& fs) {
  absl::StatusOr<std::string> name =
      fs.ReadFile("/proc/sys/kernel/hostname", 4096);
  if (name.ok()) {
    absl::string_view n = *name;
    if (!n.empty() && n.back() == '\n') n.remove_suffix(1);
    return std::string(n);
  }
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

absl::StatusOr<DefaultHostId> ResolveDefaultHostId(const HostFs& fs,
                                                   bool need_valid_id) {
  const std::string hostname = ReadHostname(fs);
  if (IsValidHostId(hostname) || !need_valid_id) {
    return DefaultHostId{hostname, "hostname"};
  }
  absl::StatusOr<std::string> machine_id = fs.ReadFile("/etc/machine-id", 4096);
  absl::StatusOr<std::string> derived =
      machine_id.ok() ? HostIdFromMachineId(*machine_id)
                      : absl::StatusOr<std::string>(machine_id.status());
  if (derived.ok()) return DefaultHostId{*derived, "/etc/machine-id"};
  return absl::InvalidArgumentError(absl::StrCat(
      "hostname '", absl::CHexEscape(hostname),
      "' is no valid host id ([A-Za-z0-9._-]{1,253}, not dots only) and no id "
      "can be derived from /etc/machine-id (",
      absl::IsNotFound(derived.status()) ? "missing"
      : absl::IsInvalidArgument(derived.status())
          ? absl::StrCat("it is ", derived.status().message())
          : std::string(derived.status().message()),
      "): pass --host_id=NAME"));
}

}  // namespace tracehealth::agent
