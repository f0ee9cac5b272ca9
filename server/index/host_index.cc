#include "server/index/host_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tracehealth::server {

absl::Status HostIndex::LoadFrom(Storage& storage) {
  absl::flat_hash_map<std::string, HostEntry> loaded;
  absl::Status first_error;
  absl::Status st = storage.LoadLatest([&](const LatestRow& row) {
    auto report = std::make_shared<v1::HostReport>();
    if (!report->ParseFromString(row.blob)) {
      if (first_error.ok()) {
        first_error = absl::DataLossError(absl::StrCat(
            "stored report ", row.host_id, "/", row.latest_seq,
            " does not parse"));
      }
      return;
    }
    HostEntry e;
    e.host_id = row.host_id;
    e.latest = std::move(report);
    e.first_seen = absl::FromUnixNanos(row.first_seen_ns);
    e.last_seen = absl::FromUnixNanos(row.last_seen_ns);
    e.reports = row.reports;
    loaded.emplace(row.host_id, std::move(e));
  });
  if (!st.ok()) return st;
  absl::MutexLock lock(&mu_);
  hosts_ = std::move(loaded);
  return first_error;
}

void HostIndex::Apply(absl::Span<const CommittedReport> reports) {
  absl::MutexLock lock(&mu_);
  for (const CommittedReport& c : reports) {
    const std::string& host = c.report->host_id();
    auto it = hosts_.find(host);
    if (it == hosts_.end()) {
      HostEntry e;
      e.host_id = host;
      e.latest = c.report;
      e.first_seen = c.received_at;
      e.last_seen = c.received_at;
      e.reports = 1;
      hosts_.emplace(host, std::move(e));
      continue;
    }
    HostEntry& e = it->second;
    if (c.report->seq() > e.latest->seq()) e.latest = c.report;
    e.first_seen = std::min(e.first_seen, c.received_at);
    e.last_seen = std::max(e.last_seen, c.received_at);
    e.reports++;
  }
}

std::optional<HostEntry> HostIndex::Get(const std::string& host_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = hosts_.find(host_id);
  if (it == hosts_.end()) return std::nullopt;
  return it->second;
}

uint64_t HostIndex::LatestSeq(const std::string& host_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = hosts_.find(host_id);
  return it == hosts_.end() ? 0 : it->second.latest->seq();
}

std::vector<HostEntry> HostIndex::Select(const LabelSelector& selector) const {
  std::vector<HostEntry> out;
  {
    // Only copy under the lock (cheap: ids and shared pointers), so label
    // matching over a large fleet never holds up the writer's updates.
    absl::ReaderMutexLock lock(&mu_);
    out.reserve(hosts_.size());
    for (const auto& [id, e] : hosts_) out.push_back(e);
  }
  if (selector.empty()) return out;
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const HostEntry& e) {
                             return !selector.Matches(e.latest->labels());
                           }),
            out.end());
  return out;
}

void HostIndex::ForEach(const std::function<void(const HostEntry&)>& fn) const {
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [id, e] : hosts_) fn(e);
}

size_t HostIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return hosts_.size();
}

}  // namespace tracehealth::server
