#include "server/index/kernel_identity.h"

#include "gtest/gtest.h"

namespace tracehealth::server {
namespace {

v1::HostSnapshot Snapshot(const char* release, const char* cpu) {
  v1::HostSnapshot s;
  s.mutable_kernel()->set_release(release);
  s.mutable_kernel()->set_version("#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1");
  s.mutable_kernel()->set_arch("x86_64");
  s.mutable_cpus()->set_model_name(cpu);
  return s;
}

TEST(KernelIdentityTest, EqualIdentitiesAreShared) {
  KernelIdentityCache cache;
  auto a = cache.Get(Snapshot("6.1.0-27-amd64", "Intel(R) Xeon(R) 8480+"));
  auto b = cache.Get(Snapshot("6.1.0-27-amd64", "Intel(R) Xeon(R) 8480+"));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->release, "6.1.0-27-amd64");
  EXPECT_EQ(a->cpu_model, "Intel(R) Xeon(R) 8480+");
  EXPECT_TRUE(a->has(KernelIdentity::kVersion));
  EXPECT_FALSE(a->has(KernelIdentity::kUpstream));
  // One field apart: another identity.
  auto c = cache.Get(Snapshot("6.1.0-27-amd64", "AMD EPYC 9654"));
  EXPECT_NE(a.get(), c.get());
  v1::HostSnapshot other_arch = Snapshot("6.1.0-27-amd64", "AMD EPYC 9654");
  other_arch.mutable_kernel()->set_arch("aarch64");
  EXPECT_NE(cache.Get(other_arch).get(), c.get());
  // An empty upstream version is not the same as none.
  v1::HostSnapshot empty_upstream = Snapshot("6.1.0-27-amd64", "AMD EPYC 9654");
  empty_upstream.mutable_kernel()->set_upstream_version("");
  EXPECT_NE(cache.Get(empty_upstream).get(), c.get());
  // None of the fields: the shared empty identity.
  EXPECT_EQ(cache.Get(v1::HostSnapshot()).get(), KernelIdentity::Empty().get());
}

TEST(KernelIdentityTest, FillSetsAndClears) {
  const KernelIdentity id =
      KernelIdentity::Of(Snapshot("6.16.3", "Intel(R) Xeon(R) 8480+"));
  v1::HostSnapshot s;
  s.mutable_kernel()->set_upstream_version("6.16.9");  // not in `id`
  id.Fill(&s);
  EXPECT_EQ(s.kernel().release(), "6.16.3");
  EXPECT_EQ(s.kernel().arch(), "x86_64");
  EXPECT_EQ(s.cpus().model_name(), "Intel(R) Xeon(R) 8480+");
  EXPECT_FALSE(s.kernel().has_upstream_version());
  KernelIdentity::Empty()->Fill(&s);
  EXPECT_FALSE(s.kernel().has_release());
  EXPECT_FALSE(s.kernel().has_version());
  EXPECT_FALSE(s.kernel().has_arch());
  EXPECT_FALSE(s.cpus().has_model_name());
}

}  // namespace
}  // namespace tracehealth::server
