#include "agent/parsers/kconfig.h"

#include <zlib.h>

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tracehealth::agent {

absl::StatusOr<KernelConfig> KernelConfig::Parse(absl::string_view text) {
  KernelConfig config;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) continue;
    if (line[0] == '#') {
      absl::string_view rest =
          absl::StripLeadingAsciiWhitespace(line.substr(1));
      if (absl::StartsWith(rest, "CONFIG_") &&
          absl::EndsWith(rest, " is not set")) {
        rest.remove_suffix(strlen(" is not set"));
        config.values_[std::string(rest)] = "n";
      }
      continue;
    }
    size_t eq = line.find('=');
    if (!absl::StartsWith(line, "CONFIG_") || eq == absl::string_view::npos ||
        eq == strlen("CONFIG_")) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel config line ", line_no, ": '",
                       line.substr(0, 80), "' is not CONFIG_NAME=value"));
    }
    config.values_[std::string(line.substr(0, eq))] =
        std::string(line.substr(eq + 1));
  }
  if (config.values_.empty()) {
    return absl::InvalidArgumentError("kernel config: no CONFIG_ lines");
  }
  return config;
}

std::optional<bool> KernelConfig::Enabled(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second == "y" || it->second == "m";
}

std::optional<int64_t> KernelConfig::Int(absl::string_view name) const {
  auto it = values_.find(name);
  int64_t v;
  if (it == values_.end() || !absl::SimpleAtoi(it->second, &v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<uint32_t> PageSizeFromConfig(const KernelConfig& config) {
  struct Option {
    const char* name;
    uint32_t bytes;
  };
  static constexpr Option kOptions[] = {
      {"CONFIG_PAGE_SIZE_4KB", 4096},    {"CONFIG_PAGE_SIZE_16KB", 16384},
      {"CONFIG_PAGE_SIZE_64KB", 65536},  {"CONFIG_ARM64_4K_PAGES", 4096},
      {"CONFIG_ARM64_16K_PAGES", 16384}, {"CONFIG_ARM64_64K_PAGES", 65536},
      {"CONFIG_PPC_4K_PAGES", 4096},     {"CONFIG_PPC_16K_PAGES", 16384},
      {"CONFIG_PPC_64K_PAGES", 65536},   {"CONFIG_PPC_256K_PAGES", 262144},
  };
  for (const Option& o : kOptions) {
    if (config.Enabled(o.name).value_or(false)) return o.bytes;
  }
  for (const char* shift_option :
       {"CONFIG_PAGE_SHIFT", "CONFIG_ARM64_PAGE_SHIFT"}) {
    std::optional<int64_t> shift = config.Int(shift_option);
    if (shift.has_value() && *shift >= 12 && *shift <= 18) {
      return uint32_t{1} << *shift;
    }
  }
  if (config.Enabled("CONFIG_X86").value_or(false)) return 4096;
  return std::nullopt;
}

absl::StatusOr<std::string> Gunzip(absl::string_view compressed,
                                   size_t max_output_bytes) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  // 16 + MAX_WBITS: gzip header and trailer (CRC and length checked).
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("zlib inflateInit2 failed");
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char buf[64 * 1024];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string msg = zs.msg != nullptr ? zs.msg : "corrupt or truncated";
      if (rc == Z_BUF_ERROR) msg = "truncated gzip data";
      inflateEnd(&zs);
      return absl::InvalidArgumentError(absl::StrCat("gzip: ", msg));
    }
    size_t produced = sizeof(buf) - zs.avail_out;
    if (out.size() + produced > max_output_bytes) {
      inflateEnd(&zs);
      return absl::ResourceExhaustedError(absl::StrCat(
          "gzip: decompressed data larger than ", max_output_bytes, " bytes"));
    }
    out.append(buf, produced);
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace tracehealth::agent
