// KernelIdentity: the strings of a host's snapshot the attach model reads
// (kernel release, version, upstream version, architecture: what its
// feature rows are resolved from; the CPU model name: its CPU class),
// shared by every host that reports the same ones. A fleet runs a few
// kernels on a few CPU models, so a record holds a pointer where it held
// five strings (about 200 bytes on the heap a host), and a fleet-wide
// query resolves features and fills these strings once per identity
// instead of once per host (server/query/attach_evaluator.h).
//
// Thread safety: a KernelIdentity is immutable; KernelIdentityCache::Get
// may be called from any thread.
#ifndef TRACEHEALTH_SERVER_INDEX_KERNEL_IDENTITY_H_
#define TRACEHEALTH_SERVER_INDEX_KERNEL_IDENTITY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "proto/tracehealth/v1/snapshot.pb.h"

namespace tracehealth::server {

struct KernelIdentity {
  enum Field : uint8_t {
    kRelease = 1u << 0,
    kVersion = 1u << 1,
    kUpstream = 1u << 2,
    kArch = 1u << 3,
    kCpuModel = 1u << 4,
  };
  std::string release;           // kernel.release
  std::string version;           // kernel.version (uname -v)
  std::string upstream_version;  // kernel.upstream_version
  std::string arch;              // kernel.arch
  std::string cpu_model;         // cpus.model_name
  uint8_t present = 0;           // Field bits: which the snapshot set

  bool has(Field f) const { return (present & f) != 0; }

  static KernelIdentity Of(const v1::HostSnapshot& snapshot);
  // Sets (or clears, when absent) these five fields of `*snapshot`.
  void Fill(v1::HostSnapshot* snapshot) const;
  // The identity of a snapshot with none of them.
  static const std::shared_ptr<const KernelIdentity>& Empty();

  bool operator==(const KernelIdentity& o) const {
    return present == o.present && release == o.release &&
           version == o.version && upstream_version == o.upstream_version &&
           arch == o.arch && cpu_model == o.cpu_model;
  }
  template <typename H>
  friend H AbslHashValue(H h, const KernelIdentity& k) {
    return H::combine(std::move(h), k.present, k.release, k.version,
                      k.upstream_version, k.arch, k.cpu_model);
  }
};

// Interns identities: hosts with equal ones share one (held as long as a
// record uses it).
class KernelIdentityCache {
 public:
  std::shared_ptr<const KernelIdentity> Get(const v1::HostSnapshot& snapshot);
  // The shared identity equal to `id` (a stored record's).
  std::shared_ptr<const KernelIdentity> Intern(KernelIdentity id);

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<KernelIdentity, std::weak_ptr<const KernelIdentity>>
      identities_ ABSL_GUARDED_BY(mu_);
  size_t purge_at_ ABSL_GUARDED_BY(mu_) = 64;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INDEX_KERNEL_IDENTITY_H_
