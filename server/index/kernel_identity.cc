#include "server/index/kernel_identity.h"

#include <algorithm>
#include <utility>

namespace tracehealth::server {
namespace {

using K = KernelIdentity;

void Take(bool has, const std::string& value, K::Field f, std::string* to,
          uint8_t* present) {
  if (!has) return;
  *to = value;
  *present |= f;
}

}  // namespace

KernelIdentity KernelIdentity::Of(const v1::HostSnapshot& snapshot) {
  const v1::KernelInfo& k = snapshot.kernel();
  const v1::CpuInfo& cpus = snapshot.cpus();
  K id;
  Take(k.has_release(), k.release(), kRelease, &id.release, &id.present);
  Take(k.has_version(), k.version(), kVersion, &id.version, &id.present);
  Take(k.has_upstream_version(), k.upstream_version(), kUpstream,
       &id.upstream_version, &id.present);
  Take(k.has_arch(), k.arch(), kArch, &id.arch, &id.present);
  Take(cpus.has_model_name(), cpus.model_name(), kCpuModel, &id.cpu_model,
       &id.present);
  return id;
}

void KernelIdentity::Fill(v1::HostSnapshot* s) const {
  v1::KernelInfo* k = s->mutable_kernel();
  has(kRelease) ? k->set_release(release) : k->clear_release();
  has(kVersion) ? k->set_version(version) : k->clear_version();
  has(kUpstream) ? k->set_upstream_version(upstream_version)
                 : k->clear_upstream_version();
  has(kArch) ? k->set_arch(arch) : k->clear_arch();
  v1::CpuInfo* cpus = s->mutable_cpus();
  has(kCpuModel) ? cpus->set_model_name(cpu_model) : cpus->clear_model_name();
}

const std::shared_ptr<const KernelIdentity>& KernelIdentity::Empty() {
  static const auto* empty =
      new std::shared_ptr<const KernelIdentity>(std::make_shared<K>());
  return *empty;
}

std::shared_ptr<const KernelIdentity> KernelIdentityCache::Get(
    const v1::HostSnapshot& snapshot) {
  return Intern(K::Of(snapshot));
}

std::shared_ptr<const KernelIdentity> KernelIdentityCache::Intern(K id) {
  if (id.present == 0) return K::Empty();
  absl::MutexLock lock(&mu_);
  auto it = identities_.find(id);
  if (it != identities_.end()) {
    if (std::shared_ptr<const K> shared = it->second.lock()) return shared;
  }
  auto shared = std::make_shared<const K>(id);
  identities_.insert_or_assign(std::move(id), shared);
  if (identities_.size() >= purge_at_) {
    // Forget the identities no record holds any more.
    absl::erase_if(identities_,
                   [](const auto& kv) { return kv.second.expired(); });
    purge_at_ = std::max<size_t>(64, 2 * identities_.size());
  }
  return shared;
}

}  // namespace tracehealth::server
