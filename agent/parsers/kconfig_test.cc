#include "agent/parsers/kconfig.h"

#include <zlib.h>

#include <cstring>
#include <string>

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

TEST(KernelConfigTest, RejectsMalformed) {
  EXPECT_FALSE(KernelConfig::Parse("").ok());
  EXPECT_FALSE(KernelConfig::Parse("# just a comment\n").ok());
  EXPECT_FALSE(KernelConfig::Parse("CONFIG_A=y\nnot a config line\n").ok());
  EXPECT_FALSE(KernelConfig::Parse("CONFIG_=y\n").ok());
  EXPECT_FALSE(KernelConfig::Parse("\x1f\x8b\x08\x00garbage").ok());
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
  EXPECT_FALSE(Gunzip(gz.substr(0, gz.size() / 2), 1 << 20).ok());
  std::string flipped = gz;
  flipped[gz.size() - 6] ^= 0x55;  // CRC trailer
  EXPECT_FALSE(Gunzip(flipped, 1 << 20).ok());
  EXPECT_FALSE(Gunzip("not gzip at all", 1 << 20).ok());
  auto big = Gunzip(gz, 10);
  EXPECT_TRUE(absl::IsResourceExhausted(big.status())) << big.status();
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

}  // namespace
}  // namespace tracehealth::agent
