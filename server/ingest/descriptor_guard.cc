#include "server/ingest/descriptor_guard.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tracehealth::server {

DescriptorGuard::DescriptorGuard(DescriptorGuardOptions options)
    : options_(std::move(options)) {}

absl::StatusOr<int64_t> DescriptorGuard::CountOpen(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot read ", dir, ": ", std::strerror(errno)));
  }
  int64_t n = 0;
  while (const dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      ++n;
  }
  closedir(d);
  // The directory stream's own descriptor was one of the entries when `dir`
  // is /proc/self/fd; a plain directory has no such entry, so clamp.
  return dir == "/proc/self/fd" && n > 0 ? n - 1 : n;
}

void DescriptorGuard::CountLocked(absl::Time now) {
  absl::StatusOr<int64_t> n = CountOpen(options_.fd_dir);
  // Unreadable: keep the estimate (last count plus admissions).
  if (n.ok()) {
    counted_ = *n;
    admitted_since_ = 0;
  }
  if (options_.limit) {
    limit_ = options_.limit();
  } else {
    rlimit lim{};
    limit_ = getrlimit(RLIMIT_NOFILE, &lim) == 0 ? lim.rlim_cur : 1024;
  }
  counted_at_ = now;
  // Forget connections without a stream for longer than the server keeps
  // idle ones.
  absl::erase_if(peers_, [&](const auto& p) {
    return now - p.second > options_.peer_ttl;
  });
}

absl::Status DescriptorGuard::Admit(absl::string_view peer) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = options_.now();
  if (now - counted_at_ >= options_.count_every) CountLocked(now);
  auto known = peers_.find(peer);
  if (known != peers_.end()) {
    if (now - known->second <= options_.peer_ttl) {
      known->second = now;
      return absl::OkStatus();
    }
    peers_.erase(known);  // its connection was closed for being idle
  }
  const auto over = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return counted_ + admitted_since_ + options_.reserve >=
           static_cast<int64_t>(limit_);
  };
  if (over() && now - counted_at_ >= options_.count_near_limit_every) {
    CountLocked(now);
  }
  if (over()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "server near its open-file limit: %d of %d descriptors in use, %d "
        "kept for the store, HTTP and queries; retry later",
        counted_ + admitted_since_, limit_, options_.reserve));
  }
  ++admitted_since_;
  peers_.emplace(peer, now);
  return absl::OkStatus();
}

}  // namespace tracehealth::server
