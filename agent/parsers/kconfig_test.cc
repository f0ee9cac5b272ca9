#include "agent/parsers/kconfig.h"

#include <zlib.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "common/testing/refusal.h"
#include "gtest/gtest.h"

namespace tracehealth::agent {
namespace {

constexpr char kConfig[] =
    "#\n"
    "# Automatically generated file; DO NOT EDIT.\n"
    "# Linux/x86 6.12.0 Kernel Configuration\n"
    "#\n"
    "CONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) 12.2.0\"\n"
    "CONFIG_PREEMPT_NONE=y\n"
    "# CONFIG_PREEMPT is not set\n"
    "CONFIG_KASAN=y\n"
    "CONFIG_KASAN_GENERIC=y\n"
    "CONFIG_STACKDEPOT_MAX_FRAMES=64\n"
    "CONFIG_SOME_MODULE=m\n";

TEST(KernelConfigTest, ParsesValues) {
  auto c = KernelConfig::Parse(kConfig);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Enabled("CONFIG_KASAN"), true);
  EXPECT_EQ(c->Enabled("CONFIG_SOME_MODULE"), true);
  EXPECT_EQ(c->Enabled("CONFIG_PREEMPT"), false);
  EXPECT_FALSE(c->Enabled("CONFIG_PAGE_OWNER").has_value());
  EXPECT_EQ(c->Int("CONFIG_STACKDEPOT_MAX_FRAMES"), 64);
  EXPECT_FALSE(c->Int("CONFIG_KASAN").has_value());
  EXPECT_EQ(c->size(), 7u);
}

// Each refusal names the line and shows it.
TEST(KernelConfigTest, RejectsMalformed) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "kernel config: no CONFIG_ lines"},
      {"# just a comment\n", "kernel config: no CONFIG_ lines"},
      {"CONFIG_A=y\nnot a config line\n",
       "kernel config line 2: 'not a config line' is not CONFIG_NAME=value"},
      {"CONFIG_=y\n",
       "kernel config line 1: 'CONFIG_=y' is not CONFIG_NAME=value"},
      {"CONFIG_A\n",
       "kernel config line 1: 'CONFIG_A' is not CONFIG_NAME=value"},
      // Compressed bytes read as text.
      {std::string("\x1f\x8b\x08\x00garbage", 11),
       std::string("kernel config line 1: '") +
           std::string("\x1f\x8b\x08\x00garbage", 11) +
           "' is not CONFIG_NAME=value"},
  };
  for (const auto& [text, message] : cases) {
    SCOPED_TRACE(text);
    ExpectRefused(KernelConfig::Parse(text).status(), message);
  }
}

// Lines are trimmed; a later assignment of an option wins, also over an
// earlier "is not set".
TEST(KernelConfigTest, TrimmingAndLastAssignmentWins) {
  absl::StatusOr<KernelConfig> c = KernelConfig::Parse(
      "  CONFIG_A=y  \r\n\tCONFIG_B=m\n# CONFIG_C is not set\nCONFIG_C=y\n"
      "CONFIG_D=y\n# CONFIG_D is not set\nCONFIG_N=64\nCONFIG_N=32\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Enabled("CONFIG_A"), true);
  EXPECT_EQ(c->Enabled("CONFIG_B"), true);  // a module counts
  EXPECT_EQ(c->Enabled("CONFIG_C"), true);
  EXPECT_EQ(c->Enabled("CONFIG_D"), false);
  EXPECT_EQ(c->Int("CONFIG_N"), 32);
  EXPECT_EQ(c->Enabled("CONFIG_ABSENT"), std::nullopt);
}

std::string Gzip(const std::string& text) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
               Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, text.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = text.size();
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = out.size();
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(GunzipTest, RoundTrips) {
  std::string gz = Gzip(kConfig);
  auto text = Gunzip(gz, 1 << 20);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, kConfig);
}

TEST(GunzipTest, RejectsCorruptTruncatedAndOversized) {
  std::string gz = Gzip(kConfig);
  auto half = Gunzip(gz.substr(0, gz.size() / 2), 1 << 20);
  EXPECT_EQ(half.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(half.status().message(), "gzip: truncated gzip data");
  std::string flipped = gz;
  flipped[gz.size() - 6] ^= 0x55;  // CRC trailer
  auto crc = Gunzip(flipped, 1 << 20);
  EXPECT_EQ(crc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(crc.status().message(), "gzip: incorrect data check");
  auto text = Gunzip("not gzip at all", 1 << 20);
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(text.status().message(), "gzip: incorrect header check");
  auto big = Gunzip(gz, 10);
  EXPECT_TRUE(absl::IsResourceExhausted(big.status())) << big.status();
  EXPECT_EQ(big.status().message(),
            "gzip: decompressed data larger than 10 bytes");
  // Exactly the decompressed size is allowed, one byte less is not.
  const size_t size = sizeof(kConfig) - 1;  // the text, without its NUL
  EXPECT_TRUE(Gunzip(gz, size).ok());
  EXPECT_TRUE(absl::IsResourceExhausted(Gunzip(gz, size - 1).status()));
}

KernelConfig Config(const char* text) {
  absl::StatusOr<KernelConfig> c = KernelConfig::Parse(text);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

// The page-size options: CONFIG_PAGE_SIZE_*KB (6.9+, every architecture),
// arch/arm64/Kconfig ARM64_*_PAGES, arch/powerpc/Kconfig PPC_*_PAGES.
TEST(KernelConfigTest, PageSizeFromConfig) {
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_PAGE_SIZE_64KB=y\n")), 65536u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_PAGE_SIZE_16KB=y\n")), 16384u);
  // An arm64 6.1 config: no CONFIG_PAGE_SIZE_* yet.
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64=y\n"
                                      "# CONFIG_ARM64_4K_PAGES is not set\n"
                                      "CONFIG_ARM64_64K_PAGES=y\n")),
            65536u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64_4K_PAGES=y\n")), 4096u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_PPC_64K_PAGES=y\n")), 65536u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_X86=y\nCONFIG_X86_64=y\n")),
            4096u);
  EXPECT_FALSE(PageSizeFromConfig(Config("CONFIG_ARM64=y\n")).has_value());
}

// arm64 configs as Kconfig writes them. 6.9+ (arch/Kconfig's PAGE_SIZE_*
// choice and PAGE_SHIFT, which arch/arm64/Kconfig's ARM64_*_PAGES select):
// a 16 KiB-page 6.18 config has all four lines; before 6.9 only the
// ARM64_ ones.
TEST(KernelConfigTest, PageSizeFromArm64Configs) {
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64=y\n"
                                      "# CONFIG_ARM64_4K_PAGES is not set\n"
                                      "CONFIG_ARM64_16K_PAGES=y\n"
                                      "# CONFIG_ARM64_64K_PAGES is not set\n"
                                      "CONFIG_PAGE_SIZE_16KB=y\n"
                                      "CONFIG_PAGE_SHIFT=14\n"
                                      "CONFIG_ARM64_PAGE_SHIFT=14\n")),
            16384u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64=y\n"
                                      "CONFIG_ARM64_16K_PAGES=y\n"
                                      "CONFIG_ARM64_PAGE_SHIFT=14\n")),
            16384u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64=y\n"
                                      "CONFIG_ARM64_64K_PAGES=y\n"
                                      "CONFIG_ARM64_PAGE_SHIFT=16\n")),
            65536u);
  // The choice is read before the shift.
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64_4K_PAGES=y\n"
                                      "CONFIG_ARM64_PAGE_SHIFT=14\n")),
            4096u);
  // A config trimmed to the shift alone: 12 to 18 taken, both ends.
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64_PAGE_SHIFT=12\n")), 4096u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_ARM64_PAGE_SHIFT=14\n")), 16384u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_PAGE_SHIFT=16\n")), 65536u);
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_PAGE_SHIFT=18\n")), 262144u);
  // CONFIG_PAGE_SHIFT (6.9+, every architecture) before the arm64 one.
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_PAGE_SHIFT=16\n"
                                      "CONFIG_ARM64_PAGE_SHIFT=14\n")),
            65536u);
  // Shifts no kernel builds, or not a number: not a page size; x86 still
  // 4096.
  for (const char* text :
       {"CONFIG_ARM64_PAGE_SHIFT=11\n", "CONFIG_ARM64_PAGE_SHIFT=19\n",
        "CONFIG_PAGE_SHIFT=-14\n", "CONFIG_ARM64_PAGE_SHIFT=\"14\"\n",
        "CONFIG_ARM64_PAGE_SHIFT=0x0e\n", "CONFIG_PAGE_SHIFT=64\n"}) {
    EXPECT_FALSE(PageSizeFromConfig(Config(text)).has_value()) << text;
  }
  EXPECT_EQ(PageSizeFromConfig(Config("CONFIG_X86=y\nCONFIG_PAGE_SHIFT=11\n")),
            4096u);
}

}  // namespace
}  // namespace tracehealth::agent
