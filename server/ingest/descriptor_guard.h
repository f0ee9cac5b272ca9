// DescriptorGuard: keeps agent connections from taking the descriptors the
// server needs for its store, HTTP and query clients.
//
// An idle agent holds a connection (one descriptor) and no stream, so the
// stream limit no longer bounds the descriptors agents hold. Before a
// Report stream is served, Admit() is asked about the stream's connection
// (its gRPC peer, "ipv4:ADDR:PORT"): a connection that had a stream within
// `peer_ttl` is admitted (its descriptor is counted already); a new one only
// while the open descriptors stay below the soft RLIMIT_NOFILE less
// `reserve`. A refused stream ends with RESOURCE_EXHAUSTED; the agent drops
// that connection and backs off.
//
// Counting: the entries of /proc/self/fd, at most once a second, and at most
// every 100 ms once the estimate reaches the threshold. Between counts the
// estimate is the last count plus the new connections admitted since, so it
// does not fall behind the agents' own connections; other descriptors
// (HTTP, store) opened in between are what `reserve` is for.
//
// Thread safety: Admit may be called from any thread.
#ifndef TRACEHEALTH_SERVER_INGEST_DESCRIPTOR_GUARD_H_
#define TRACEHEALTH_SERVER_INGEST_DESCRIPTOR_GUARD_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tracehealth::server {

struct DescriptorGuardOptions {
  // Descriptors kept for everything but agent connections.
  int64_t reserve = 256;
  // The directory whose entries are the open descriptors.
  std::string fd_dir = "/proc/self/fd";
  // The open-file limit; default: the soft RLIMIT_NOFILE, read at each count.
  std::function<uint64_t()> limit;
  std::function<absl::Time()> now = [] { return absl::Now(); };
  absl::Duration count_every = absl::Seconds(1);
  absl::Duration count_near_limit_every = absl::Milliseconds(100);
  // A connection without a stream for this long is treated as closed (the
  // server closes connections idle for 5 minutes).
  absl::Duration peer_ttl = absl::Minutes(5) + absl::Seconds(30);
};

class DescriptorGuard {
 public:
  explicit DescriptorGuard(DescriptorGuardOptions options);

  // OK, or RESOURCE_EXHAUSTED naming the descriptors in use, the limit and
  // the reserve.
  absl::Status Admit(absl::string_view peer);

  // Entries of `dir` less the one reading it holds (so /proc/self/fd gives
  // the descriptors open before the call). Errors: the directory cannot be
  // read.
  static absl::StatusOr<int64_t> CountOpen(const std::string& dir);

 private:
  void CountLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DescriptorGuardOptions options_;
  absl::Mutex mu_;
  int64_t counted_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t admitted_since_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t limit_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time counted_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // Connections that had a stream, with the time of the last one.
  absl::flat_hash_map<std::string, absl::Time> peers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_DESCRIPTOR_GUARD_H_
