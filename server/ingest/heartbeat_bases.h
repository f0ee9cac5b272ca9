// HeartbeatBases: the reports heartbeat forms (report.proto HeartbeatForm)
// are rebuilt from. Per host the newest report its agent sent whole as a
// base (heartbeat present, base_seq 0), parsed, as ingest received it; a
// heartbeat form naming that seq is rebuilt from it (heartbeat_report.h
// PutBeat) and stored like any report.
//
// Bounded: at most `max_bytes` of parsed reports (SpaceUsedLong, plus the
// numbers); an insert
// over it evicts the least recently used hosts. A base that is not held
// (evicted, another seq, a restarted server) is read from the store with
// `read` (GetReport: a base stored as a heartbeat is its rebuilt report) and
// held again; NotFound from it means the server does not have that base.
//
// Thread safety: thread-safe. `read` is called without the lock held.
#ifndef TRACEHEALTH_SERVER_INGEST_HEARTBEAT_BASES_H_
#define TRACEHEALTH_SERVER_INGEST_HEARTBEAT_BASES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/report/material.h"
#include "proto/tracehealth/v1/report.pb.h"

namespace tracehealth::server {

// A base: the report, parsed, and what a report rebuilt from it counts as
// its material content (common/report/material.h): the base's, which the
// agent found equal to the form's.
struct HeartbeatBase {
  std::shared_ptr<const v1::HostReport> report;  // never null
  size_t wire_size = 0;                          // its encoded size
  uint64_t digest = 0;
  SharedNumbers numbers;
};

class HeartbeatBases {
 public:
  // The stored report blob of (host, seq): ReportStore::GetReport.
  using Read = std::function<absl::StatusOr<std::string>(
      const std::string& host, uint64_t seq)>;

  HeartbeatBases(size_t max_bytes, Read read)
      : max_bytes_(max_bytes), read_(std::move(read)) {}

  // `base`, seq `seq`, was received whole as a base of `host`: it
  // replaces what is held for the host.
  void Put(const std::string& host, uint64_t seq, HeartbeatBase base);

  // The base (host, seq): held, or read from the store and held. NotFound
  // when the store does not have it; DataLoss when its bytes do not parse;
  // the read's other errors as they are.
  absl::StatusOr<std::shared_ptr<const HeartbeatBase>> Get(
      const std::string& host, uint64_t seq);

  size_t hosts() const;
  size_t bytes() const;
  // Gets answered from what was held, and from the store.
  uint64_t hits() const;
  uint64_t reads() const;

 private:
  struct Entry {
    uint64_t seq = 0;
    std::shared_ptr<const HeartbeatBase> base;
    size_t bytes = 0;
    std::list<std::string>::iterator lru;  // position in lru_
  };
  void PutLocked(const std::string& host, uint64_t seq,
                 std::shared_ptr<const HeartbeatBase> base)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_bytes_;
  const Read read_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> hosts_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reads_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tracehealth::server

#endif  // TRACEHEALTH_SERVER_INGEST_HEARTBEAT_BASES_H_
