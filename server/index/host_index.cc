#include "server/index/host_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/calibration/calibrated_report.h"
#include "server/report/wire_check.h"

namespace tracehealth::server {

absl::Status HostIndex::LoadFrom(ReportStore& storage) {
  absl::flat_hash_map<std::string, Entry> loaded;
  absl::Status first_error;
  absl::Status st = storage.LoadLatest([&](LatestRow& row) {
    // Only whether it decodes: its values were checked when it arrived,
    // perhaps under other limits.
    if (absl::IsDataLoss(CheckReportWire(row.blob, WireLimits{}))) {
      if (first_error.ok()) {
        first_error = absl::DataLossError(
            absl::StrCat("stored report ", row.host_id, "/", row.latest_seq,
                         " does not parse"));
      }
      return;
    }
    Entry e;
    e.latest = std::make_shared<StoredReport>(row.host_id, row.latest_seq,
                                              std::move(row.blob));
    e.first_seen = absl::FromUnixNanos(row.first_seen_ns);
    e.last_seen = absl::FromUnixNanos(row.last_seen_ns);
    e.reports = row.reports;
    loaded.emplace(std::move(row.host_id), std::move(e));
  });
  if (!st.ok()) return st;
  absl::MutexLock lock(&mu_);
  hosts_ = std::move(loaded);
  return first_error;
}

void HostIndex::Apply(absl::Span<const CommittedReport> reports) {
  absl::MutexLock lock(&mu_);
  for (const CommittedReport& c : reports) {
    auto [it, inserted] = hosts_.try_emplace(c.report->host_id());
    Entry& e = it->second;
    if (inserted) {
      e.latest = c.report;
      e.first_seen = c.received_at;
      e.last_seen = c.received_at;
      e.reports = 1;
      continue;
    }
    if (c.report->seq() > e.latest->seq()) e.latest = c.report;
    e.first_seen = std::min(e.first_seen, c.received_at);
    e.last_seen = std::max(e.last_seen, c.received_at);
    e.reports++;
  }
}

absl::Status HostIndex::Merge(LatestRow& row) {
  if (absl::IsDataLoss(CheckReportWire(row.blob, WireLimits{}))) {
    return absl::DataLossError(
        absl::StrCat("report ", row.host_id, "/", row.latest_seq,
                     " from the change feed does not parse"));
  }
  const absl::Time first = absl::FromUnixNanos(row.first_seen_ns);
  const absl::Time last = absl::FromUnixNanos(row.last_seen_ns);
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = hosts_.try_emplace(row.host_id);
  Entry& e = it->second;
  if (inserted || row.latest_seq > e.latest->seq()) {
    e.latest = std::make_shared<StoredReport>(row.host_id, row.latest_seq,
                                              std::move(row.blob));
  }
  e.first_seen = inserted ? first : std::min(e.first_seen, first);
  e.last_seen = inserted ? last : std::max(e.last_seen, last);
  e.reports = std::max(e.reports, row.reports);
  return absl::OkStatus();
}

HostEntry HostIndex::ToHostEntry(const std::string& host_id,
                                 const Entry& e) const {
  HostEntry out;
  out.host_id = host_id;
  out.latest = WithClassCalibration(e.latest->report(), classes_);
  out.first_seen = e.first_seen;
  out.last_seen = e.last_seen;
  out.reports = e.reports;
  return out;
}

std::vector<std::pair<std::string, HostIndex::Entry>> HostIndex::Copy() const {
  std::vector<std::pair<std::string, Entry>> out;
  absl::ReaderMutexLock lock(&mu_);
  out.reserve(hosts_.size());
  for (const auto& [id, e] : hosts_) out.emplace_back(id, e);
  return out;
}

std::optional<HostEntry> HostIndex::Get(const std::string& host_id) const {
  Entry e;
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = hosts_.find(host_id);
    if (it == hosts_.end()) return std::nullopt;
    e = it->second;
  }
  return ToHostEntry(host_id, e);
}

uint64_t HostIndex::LatestSeq(const std::string& host_id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = hosts_.find(host_id);
  return it == hosts_.end() ? 0 : it->second.latest->seq();
}

std::vector<HostEntry> HostIndex::Select(const LabelSelector& selector) const {
  // Only copy under the lock (ids and shared pointers), so parsing and
  // label matching over a large fleet never hold up the writer's updates.
  std::vector<std::pair<std::string, Entry>> all = Copy();
  std::vector<HostEntry> out;
  out.reserve(all.size());
  for (const auto& [id, e] : all) {
    HostEntry h = ToHostEntry(id, e);
    if (selector.empty() || selector.Matches(h.latest->labels()))
      out.push_back(std::move(h));
  }
  return out;
}

void HostIndex::ForEach(const std::function<void(const HostEntry&)>& fn) const {
  for (const auto& [id, e] : Copy()) fn(ToHostEntry(id, e));
}

size_t HostIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return hosts_.size();
}

}  // namespace tracehealth::server
