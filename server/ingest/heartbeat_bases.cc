#include "server/ingest/heartbeat_bases.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/report/material.h"
#include "server/report/stored_report.h"

namespace tracehealth::server {

void HeartbeatBases::Put(const std::string& host, uint64_t seq,
                         HeartbeatBase base) {
  auto shared = std::make_shared<const HeartbeatBase>(std::move(base));
  absl::MutexLock lock(&mu_);
  PutLocked(host, seq, std::move(shared));
}

void HeartbeatBases::PutLocked(const std::string& host, uint64_t seq,
                               std::shared_ptr<const HeartbeatBase> base) {
  const size_t cost =
      base->report->SpaceUsedLong() +
      (base->numbers == nullptr ? 0 : base->numbers->size()) * sizeof(float) +
      host.size() + sizeof(Entry) + sizeof(HeartbeatBase);
  auto it = hosts_.find(host);
  if (it != hosts_.end()) {
    Entry& e = it->second;
    bytes_ -= e.bytes;
    e.seq = seq;
    e.base = std::move(base);
    e.bytes = cost;
    lru_.splice(lru_.begin(), lru_, e.lru);
  } else {
    lru_.push_front(host);
    Entry e;
    e.seq = seq;
    e.base = std::move(base);
    e.bytes = cost;
    e.lru = lru_.begin();
    hosts_.emplace(host, std::move(e));
  }
  bytes_ += cost;
  // The newest entry stays, even alone over the bound.
  while (bytes_ > max_bytes_ && lru_.size() > 1) {
    auto last = hosts_.find(lru_.back());
    bytes_ -= last->second.bytes;
    hosts_.erase(last);
    lru_.pop_back();
  }
}

absl::StatusOr<std::shared_ptr<const HeartbeatBase>> HeartbeatBases::Get(
    const std::string& host, uint64_t seq) {
  {
    absl::MutexLock lock(&mu_);
    auto it = hosts_.find(host);
    if (it != hosts_.end() && it->second.seq == seq) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      ++hits_;
      return it->second.base;
    }
    ++reads_;
  }
  absl::StatusOr<std::string> blob = read_(host, seq);
  if (!blob.ok()) return blob.status();
  bool ok = false;
  HeartbeatBase base;
  base.report = ParseStoredReport(host, seq, *blob, &ok);
  if (!ok) {
    return absl::DataLossError(
        absl::StrCat("stored report ", host, " seq ", seq, " does not parse"));
  }
  base.wire_size = blob->size();
  Material m = MaterialOfWire(*blob);
  base.digest = m.digest;
  base.numbers = ShareNumbers(std::move(m.numbers));
  auto shared = std::make_shared<const HeartbeatBase>(std::move(base));
  absl::MutexLock lock(&mu_);
  auto it = hosts_.find(host);
  // A newer base put meanwhile stays.
  if (it == hosts_.end() || it->second.seq <= seq) PutLocked(host, seq, shared);
  return shared;
}

size_t HeartbeatBases::hosts() const {
  absl::MutexLock lock(&mu_);
  return hosts_.size();
}

size_t HeartbeatBases::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

uint64_t HeartbeatBases::hits() const {
  absl::MutexLock lock(&mu_);
  return hits_;
}

uint64_t HeartbeatBases::reads() const {
  absl::MutexLock lock(&mu_);
  return reads_;
}

}  // namespace tracehealth::server
